import type { AgentRuntime } from './runtime.js';

/** Every call to the control server gives up after this long (a hung server must not stall a reconcile forever). */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface HttpAnswer<T = unknown> {
  status: number;
  body: T;
  /** The answer's `ETag` header, when it has one. */
  etag?: string;
}

/**
 * One JSON call to `${apiBase}${path}`, with the agent token as Bearer when
 * given. Resolves for every status with the parsed body (text when it is not
 * JSON, null when empty); rejects only when the server cannot be reached.
 */
export async function callControl<T = unknown>(
  apiBase: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token?: string,
  extraHeaders: Record<string, string> = {},
): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${apiBase}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text === '' ? null : text;
  if (text !== '' && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text: the caller reports it
    }
  }
  const etag = res.headers.get('etag');
  return { status: res.status, body: parsed as T, ...(etag ? { etag } : {}) };
}

/** The error detail of an answer (`{detail}` or `{detail: {message}}`), else the status. */
export function detailOf(answer: HttpAnswer): string {
  const body = answer.body as { detail?: unknown } | string | null;
  const detail = typeof body === 'object' && body !== null ? body.detail : body;
  if (typeof detail === 'string' && detail !== '') return `${answer.status} ${detail}`;
  if (typeof detail === 'object' && detail !== null && typeof (detail as { message?: unknown }).message === 'string')
    return `${answer.status} ${(detail as { message: string }).message}`;
  return `HTTP ${answer.status}`;
}

/** WebSocket URL of an agent channel path (`/agent/ws/fra1`, `/agent/probe-stream/<id>`) under the runtime's API base. */
export function agentWsUrl(rt: Pick<AgentRuntime, 'controllerUrl'>, path: string): string {
  return `${rt.controllerUrl.replace(/^http/, 'ws')}${path}`;
}
