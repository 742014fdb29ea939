/**
 * The apps' way to the control server: same-origin JSON calls under
 * `/control/v1`, typed by the server's own `openapi.json` (`http/control/openapi-types.ts`
 * generates `paths` and `components` at build time), with the Bearer token of
 * the app's session. Every failure is an `ApiError` carrying the server's
 * `detail` (shown to the user as is); a call that got no answer has status 0.
 * A 401 ends the session (`onUnauthorized`).
 */

import createClient, { createQuerySerializer, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { HttpMethod, OperationRequestBodyContent, PathsWithMethod, RequiredKeysOf, SuccessResponseJSON, Writable } from 'openapi-typescript-helpers';
import type { FieldError, paths } from '../../.build/generated/control-api.js';

export const API_BASE = '/control/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: unknown = null,
  ) {
    super(detail);
  }
  /**
   * Field errors of a 422 by dotted field path (`remote_asn`, `sessions.0.peer_ip`):
   * the control server answers `{detail: {message, errors: [{loc, msg, type}]}}`,
   * `loc` starting with `body`.
   */
  get fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of fieldErrorsOf(this.body)) {
      const key = e.loc.filter((part, i) => !(i === 0 && (part === 'body' || part === 'query'))).join('.');
      if (key && !out[key]) out[key] = e.msg;
    }
    return out;
  }
}

/** A validation answer's field errors (`{loc, msg}`, the server's `FieldError`). */
function fieldErrorsOf(body: unknown): Pick<FieldError, 'loc' | 'msg'>[] {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const list = Array.isArray(detail) ? detail : (detail as { errors?: unknown } | null)?.errors;
  return Array.isArray(list) ? list.filter((e): e is Pick<FieldError, 'loc' | 'msg'> => Array.isArray(e?.loc) && typeof e?.msg === 'string') : [];
}

export const NO_ANSWER = 'The server did not answer. Check the connection and try again.';

export interface Session {
  token(): string | null;
  /** Called once per 401 answer, after which the call throws. */
  onUnauthorized(): void;
}

/**
 * What a call answers: `Answer<'/ui/nodes'>` (GET), `Answer<'/admin/dns-groups', 'post'>`;
 * the 2xx JSON body the server's document declares (undefined when it declares none).
 */
export type Answer<P extends keyof paths, M extends HttpMethod = 'get'> = [SuccessResponseJSON<Operation<P, M>>] extends [never]
  ? undefined
  : SuccessResponseJSON<Operation<P, M>>;

/** A request body the server's document declares: `Body<'/admin/dns-groups', 'post'>`. */
export type Body<P extends keyof paths, M extends HttpMethod> = Writable<OperationRequestBodyContent<Operation<P, M>>>;

/** One typed call: the path as the server's document names it (`/ui/nodes/{node_id}/links`), its params, body and signal; the answer's body. */
type Call<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, I extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: RequiredKeysOf<I> extends never ? [(I & Extra)?] : [I & Extra]
) => Promise<Answer<P, M>>;

type Operation<P extends keyof paths, M extends HttpMethod> = Extract<paths[P][M], Record<string | number, unknown>>;

interface Extra {
  /** A 401 here is about the request (a wrong current password), not the session: do not end it. */
  keepSession?: boolean;
  [key: string]: unknown;
}

/**
 * The app's client: `openapi-fetch` over the generated `paths`, with a middleware
 * that adds the Bearer token and turns every failure into an `ApiError` (a 401
 * ends the session unless the call says `keepSession`). Each method answers the
 * body (a failure throws): `await api.get('/ui/nodes/{node_id}/links', { params: { path: { node_id } }, signal })`.
 */
export function client(session: Session, base = API_BASE) {
  const raw = createClient<paths>({ baseUrl: base, cache: 'no-store', headers: { accept: 'application/json' }, querySerializer: withoutEmpty });
  raw.use(sessionMiddleware(session));
  const answer = <M extends HttpMethod>(method: Uppercase<M>): Call<M> =>
    // openapi-fetch's own generics are the ones `Call` names; it cannot see through them here.
    ((url: never, init?: object) =>
      raw.request(method.toLowerCase() as never, url, init as never).then((res: { data?: unknown }) => res.data)) as unknown as Call<M>;
  return {
    get: answer<'get'>('GET'),
    post: answer<'post'>('POST'),
    put: answer<'put'>('PUT'),
    patch: answer<'patch'>('PATCH'),
    del: answer<'delete'>('DELETE'),
    /** The URL of a server-sent event stream (EventSource cannot send headers: the caller uses `streamEvents`). */
    url: (path: string) => `${base}${path}`,
  };
}

function detailOf(status: number, body: unknown, text: string): string {
  const b = body as { detail?: unknown; error_description?: unknown; title?: unknown; error?: unknown } | null;
  for (const v of [b?.detail, b?.error_description, b?.title, b?.error]) if (typeof v === 'string' && v) return v;
  // A validation answer: its message, then each field's complaint.
  const message = (b?.detail as { message?: unknown } | null)?.message;
  const fields = fieldErrorsOf(body).map((e) => `${e.loc.filter((p) => p !== 'body').join('.')}: ${e.msg}`);
  if (typeof message === 'string' || fields.length) return [typeof message === 'string' ? message : 'invalid request', ...fields].join('; ');
  return text.trim().slice(0, 300) || `HTTP ${status}`;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

const serializeQuery = createQuerySerializer();

/** A query without its empty values (an unset filter is left out, not sent as `q=`). */
function withoutEmpty(query: Record<string, unknown>): string {
  return serializeQuery(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== '')));
}

/** The Bearer token on the way out; on the way back a failure becomes an `ApiError` with the server's `detail`. */
function sessionMiddleware(session: Session): Middleware {
  return {
    onRequest({ request }) {
      const token = session.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
    async onResponse({ request, response }) {
      if (response.ok) return undefined;
      const text = await response.clone().text();
      const parsed = parseJson(text);
      const error = new ApiError(response.status, detailOf(response.status, parsed, text), parsed);
      const keepSession = (request as Request & { keepSession?: boolean }).keepSession === true;
      if (response.status === 401 && request.headers.has('authorization') && !keepSession) session.onUnauthorized();
      throw error;
    },
    onError({ error }) {
      if (error instanceof ApiError || (error as Error | null)?.name === 'AbortError') return error as Error;
      return new ApiError(0, NO_ANSWER);
    },
  };
}

/** The JSON object an event's `data` carries, or `{}` when it carries none (a keep-alive, plain text). */
export function eventData(text: string): Record<string, unknown> {
  const v = parseJson(text);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Reads a `text/event-stream` answer with the Bearer header (EventSource cannot
 * send one), calling `onEvent` per event until the stream ends or `signal` aborts.
 */
export async function streamEvents(
  session: Session,
  url: string,
  onEvent: (event: { event: string; data: string; id?: string }) => void,
  signal: AbortSignal,
  init: { method?: string; body?: unknown } = {},
): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  const token = session.token();
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method: init.method ?? 'GET', headers, signal, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
    throw new ApiError(0, NO_ANSWER);
  }
  if (!res.ok || !res.body) {
    const text = await res.text();
    const parsed = parseJson(text);
    if (res.status === 401 && token) session.onUnauthorized();
    throw new ApiError(res.status, detailOf(res.status, parsed, text), parsed);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
        let event = 'message';
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = val;
          else if (field === 'data') data.push(val);
          else if (field === 'id') id = val;
        }
        if (data.length || event !== 'message') onEvent({ event, data: data.join('\n'), id });
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
}

/** The control server's shapes by their component names in its `openapi.json` (`NodeRow`, `PortalRequestRow`, `FieldError`). */
export type * from '../../.build/generated/control-api.js';
