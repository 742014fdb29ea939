/**
 * The page's only way to the service: same-origin JSON calls on paths relative
 * to the page (`api/v1/...` resolves against `/authorize`, so the page also works
 * behind a path prefix). Every outcome is an `ApiResult`; a request that never got
 * an HTTP answer is status 0 (the contract's network failure), never a throw.
 */
export interface ApiResult {
  /** HTTP status, or 0 when no answer arrived (offline, connection reset, DNS). */
  status: number;
  /** The parsed JSON body, or null when there was none or it was not JSON. */
  body: unknown;
}

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export const PATHS = {
  context: 'api/v1/oauth/authorize-context',
  approve: 'api/v1/oauth/approve',
  options: 'api/v1/verification-options',
  challenge: 'api/v1/challenge',
  submit: 'api/v1/challenge/submit',
  passkeyLoginBegin: 'api/v1/passkeys/login/begin',
  passkeyLoginFinish: 'api/v1/passkeys/login/finish',
  passkeyRegisterBegin: 'api/v1/passkeys/register/begin',
  passkeyRegisterFinish: 'api/v1/passkeys/register/finish',
} as const;

/**
 * One call. The path is taken as given (a captcha endpoint from the backend may
 * be absolute); `cache: 'no-store'` because every answer here is per request.
 */
export async function call(fetchFn: Fetch, method: 'GET' | 'POST', path: string, options: { body?: unknown; token?: string } = {}): Promise<ApiResult> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  try {
    response = await fetchFn(path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      credentials: 'same-origin',
    });
  } catch {
    return { status: 0, body: null };
  }
  return { status: response.status, body: await jsonOf(response) };
}

async function jsonOf(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page, or a body cut off by the network.
    return null;
  }
}
