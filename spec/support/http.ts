import { expect } from 'chai';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  redirect?: RequestRedirect;
}

/** A small HTTP client over global fetch for specs: JSON in, JSON (or text) out. */
export function api(baseUrl: string, defaults: { token?: string } = {}) {
  const send = async <T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token ?? defaults.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    const res = await fetch(baseUrl + path, { method, headers, body, redirect: options.redirect ?? 'manual' });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
  return {
    send,
    get: <T = any>(path: string, o?: RequestOptions) => send<T>('GET', path, o),
    post: <T = any>(path: string, body?: unknown, o?: RequestOptions) => send<T>('POST', path, { ...o, body }),
    put: <T = any>(path: string, body?: unknown, o?: RequestOptions) => send<T>('PUT', path, { ...o, body }),
    patch: <T = any>(path: string, body?: unknown, o?: RequestOptions) => send<T>('PATCH', path, { ...o, body }),
    delete: <T = any>(path: string, o?: RequestOptions) => send<T>('DELETE', path, o),
  };
}

/**
 * HTTP specs as given / when / then: the response must have this status, and
 * (optionally) a body containing these fields or this exact control `detail`.
 */
export function expectResponse(res: ApiResponse) {
  const chain = {
    status(code: number) {
      expect(res.status, `status of ${res.text.slice(0, 300)}`).to.equal(code);
      return chain;
    },
    detail(text: string | RegExp) {
      const detail =
        typeof res.body?.detail === 'object' && res.body.detail !== null && 'message' in res.body.detail ? res.body.detail.message : res.body?.detail;
      if (text instanceof RegExp) expect(detail).to.match(text);
      else expect(detail).to.equal(text);
      return chain;
    },
    body(subset: Record<string, unknown>) {
      expect(res.body).to.deep.include(subset);
      return chain;
    },
    header(name: string, value: string | RegExp) {
      const actual = res.headers.get(name);
      if (value instanceof RegExp) expect(actual).to.match(value);
      else expect(actual).to.equal(value);
      return chain;
    },
  };
  return chain;
}
