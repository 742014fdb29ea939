import type { DomainEvent } from '../decider.js';

/**
 * The record of a user's approval on the authorization page: which verified
 * identity (maintainer, ASN, method) authorised which application, for which
 * scopes and resources. It is written before the provider's grant and code,
 * on `oidc-approval-<grant_id>`, and is how the provider finds the maintainer
 * and ASN behind a token's `sub` (a sha256 that cannot be reversed).
 */
export interface ApprovalRecord {
  grant_id: string;
  client_id: string;
  sub: string;
  mntner: string;
  asn: number;
  /** How the session behind the approval was verified. */
  method: 'email' | 'pgp' | 'ssh' | 'passkey';
  scope: string;
  resource: string[];
  redirect_uri: string;
  at: string;
}

export type AuthorizationApproved = DomainEvent<'AuthorizationApproved', ApprovalRecord>;

export const approvalStream = (grantId: string): string => `oidc-approval-${grantId}`;
