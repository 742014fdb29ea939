import { expectResponse, api } from './http.js';
import { GAMMA_ASN, optionId, startVerification, type VerificationFixture } from '../http/identity/verification-support.js';

/** The identity admin token of the OIDC specs (IDENTITY_ADMIN_TOKEN). */
export const OIDC_ADMIN_TOKEN = 'identity-admin-token-for-the-oidc-specs';
/** The one resource indicator the OIDC specs allow (OIDC_RESOURCES). */
export const OIDC_RESOURCE = 'https://api.spec.example/';
export const GAMMA_MNT = 'GAMMA-MNT';

export interface OidcFixture extends VerificationFixture {
  /** A client of the service carrying the admin token. */
  admin: ReturnType<typeof api>;
}

/**
 * The identity service of `startVerification` (AS4242420010 / GAMMA-MNT with a
 * real SSH key, proof-of-work captcha) with the administration enabled
 * (`OIDC_ADMIN_TOKEN`) and `OIDC_RESOURCE` allowed. `env` overrides settings
 * (e.g. `CAPTCHA_KIND: 'none'`). Close it with `done()`.
 */
export async function startOidc(env: Record<string, string> = {}): Promise<OidcFixture> {
  const f = await startVerification({ IDENTITY_ADMIN_TOKEN: OIDC_ADMIN_TOKEN, OIDC_RESOURCES: OIDC_RESOURCE, ...env });
  return { ...f, admin: api(f.url, { token: OIDC_ADMIN_TOKEN }) };
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  name: string;
  redirect_uris: string[];
  confidential: boolean;
}

/** Registers an OAuth application through `POST /api/v1/admin/oauth-clients` (201 expected). */
export async function registerClient(
  f: { admin: ReturnType<typeof api> },
  input: { redirect_uris: string[]; confidential?: boolean; name?: string },
): Promise<RegisteredClient> {
  const res = await f.admin.post('/api/v1/admin/oauth-clients', {
    name: input.name ?? 'Spec App',
    redirect_uris: input.redirect_uris,
    confidential: input.confidential ?? false,
  });
  expectResponse(res).status(201);
  return res.body;
}

/**
 * A session JWT for GAMMA-MNT / AS4242420010 earned the way the page earns it:
 * verification options (captcha solved), an ssh challenge, the nonce signed by
 * `ssh-keygen -Y sign`, the signature submitted.
 */
export async function sshSession(f: VerificationFixture): Promise<{ token: string; passkey_enrollment_available?: boolean }> {
  const option = await optionId(f.client, GAMMA_ASN, 'ssh');
  const challenge = await f.client.post('/api/v1/challenge', { asn: GAMMA_ASN, option_id: option });
  expectResponse(challenge).status(201);
  const submit = await f.client.post('/api/v1/challenge/submit', { challenge_id: challenge.body.challenge_id, answer: f.ssh.sign(challenge.body.nonce) });
  expectResponse(submit).status(200);
  return submit.body;
}

/** The query string of an authorization URL (what the page forwards to authorize-context). */
export function queryOf(url: URL | string): string {
  return new URL(url).search.slice(1);
}

export { GAMMA_ASN };
