// STUB — owned by the identity-session helper, who replaces the bodies. Signatures are the agreed interface.
import type { ServiceContext } from '../../http/shared/context.js';

export type AuthMethod = 'email' | 'pgp' | 'ssh' | 'passkey';

/** The contract's session grant (document 1, Session grant). */
export interface SessionGrant {
  token: string;
  asn: number;
  mntner: string;
  method: AuthMethod;
  expires_at: string;
  passkey_enrollment_available?: boolean;
}

/**
 * Signs a 2-hour EdDSA session JWT for the verified (mntner, asn) pair and records
 * only its jti and sha256 as an event. `passkey_enrollment_available` is not set here.
 */
export async function issueSession(_ctx: ServiceContext, _identity: { asn: number; mntner: string; method: AuthMethod }): Promise<SessionGrant> {
  throw new Error('issueSession: not implemented yet');
}

/** True when the maintainer has at least one registered passkey. */
export async function maintainerHasPasskeys(_ctx: ServiceContext, _mntner: string): Promise<boolean> {
  throw new Error('maintainerHasPasskeys: not implemented yet');
}
