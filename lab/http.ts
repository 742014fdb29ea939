import { LabError } from './exec.js';

/** A small JSON client over fetch for the lab's API calls: JSON in, JSON (or text) out; redirects not followed. */

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export type Client = ReturnType<typeof client>;

export function client(baseUrl: string, token?: string) {
  const send = async <T = any>(method: string, path: string, body?: unknown, bearer = token): Promise<Reply<T>> => {
    const headers: Record<string, string> = {};
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').includes('json') && text ? (JSON.parse(text) as T) : (text as T);
    return { status: res.status, headers: res.headers, body: json, text };
  };
  return {
    base: baseUrl,
    send,
    get: <T = any>(path: string, bearer?: string) => send<T>('GET', path, undefined, bearer ?? token),
    post: <T = any>(path: string, body?: unknown, bearer?: string) => send<T>('POST', path, body ?? {}, bearer ?? token),
    put: <T = any>(path: string, body: unknown) => send<T>('PUT', path, body),
    patch: <T = any>(path: string, body: unknown) => send<T>('PATCH', path, body),
    delete: <T = any>(path: string) => send<T>('DELETE', path),
  };
}

/** The reply's body when its status is one of `ok`, else a `LabError` naming the call and the server's detail. */
export function expectStatus<T>(reply: Reply<T>, what: string, ...ok: number[]): T {
  if (!(ok.length ? ok : [200, 201]).includes(reply.status)) {
    const detail = (reply.body as { detail?: unknown })?.detail;
    throw new LabError(`${what}: HTTP ${reply.status} ${typeof detail === 'string' ? detail : JSON.stringify(detail ?? reply.text.slice(0, 300))}`);
  }
  return reply.body;
}
