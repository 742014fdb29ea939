/**
 * The apps' way to the control server: same-origin JSON calls under
 * `/control/v1`, with the Bearer token of the app's session. Every failure is an
 * `ApiError` carrying the server's `detail` (shown to the user as is); a call
 * that got no answer has status 0. A 401 ends the session (`onUnauthorized`).
 */

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

interface FieldError {
  loc: (string | number)[];
  msg: string;
}

function fieldErrorsOf(body: unknown): FieldError[] {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const list = Array.isArray(detail) ? detail : (detail as { errors?: unknown } | null)?.errors;
  return Array.isArray(list) ? list.filter((e): e is FieldError => Array.isArray(e?.loc) && typeof e?.msg === 'string') : [];
}

export const NO_ANSWER = 'The server did not answer. Check the connection and try again.';

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface Session {
  token(): string | null;
  /** Called once per 401 answer, after which the call throws. */
  onUnauthorized(): void;
}

export interface CallOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** Raw body (a file upload) instead of JSON. */
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** A 401 here is about the request (a wrong current password), not the session: do not end it. */
  keepSession?: boolean;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
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

export function client(session: Session, base = API_BASE) {
  async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    const token = session.token();
    if (token) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined = options.raw;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let res: Response;
    try {
      res = await fetch(withQuery(`${base}${path}`, options.query), { method, headers, body, signal: options.signal, cache: 'no-store' });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ApiError(0, NO_ANSWER);
    }
    const text = res.status === 204 ? '' : await res.text();
    const parsed = parseJson(text);
    if (!res.ok) {
      const error = new ApiError(res.status, detailOf(res.status, parsed, text), parsed);
      if (res.status === 401 && token && !options.keepSession) session.onUnauthorized();
      throw error;
    }
    return (parsed ?? (text || null)) as T;
  }
  return {
    call,
    get: <T>(path: string, query?: Query, signal?: AbortSignal) => call<T>('GET', path, { query, signal }),
    post: <T>(path: string, body?: unknown, query?: Query) => call<T>('POST', path, { body, query }),
    put: <T>(path: string, body?: unknown) => call<T>('PUT', path, { body }),
    patch: <T>(path: string, body?: unknown) => call<T>('PATCH', path, { body }),
    del: <T>(path: string, query?: Query) => call<T>('DELETE', path, { query }),
    /** The URL of a server-sent event stream (EventSource cannot send headers: the caller uses `streamEvents`). */
    url: (path: string, query?: Query) => withQuery(`${base}${path}`, query),
  };
}

export type Api = ReturnType<typeof client>;

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
