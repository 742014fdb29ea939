import { unreachable, type DomainEvent } from '../decider.js';

/**
 * Passkeys (WebAuthn credentials) belong to a maintainer, not to an ASN: they
 * live in the `maintainer-<mntner>` stream, and every ASN the maintainer holds
 * at login time shares them. A credential id is claimed once for the whole
 * service in `passkey-credential-<sha256(id)>`, so the same credential can never
 * be registered twice, not even by two maintainers.
 */
export type PasskeyRegistered = DomainEvent<
  'PasskeyRegistered',
  {
    credential_id: string;
    /** COSE public key, base64url. */
    public_key: string;
    counter: number;
    transports: string[];
    aaguid: string;
    label: string;
    device_type: string;
    backed_up: boolean;
    /** The creation result exactly as the browser sent it (untrimmed, `transports` included). */
    credential: unknown;
    registered_at: string;
  }
>;

/** A login with the credential succeeded; `counter` is the higher of the stored and the authenticator's new signature counter. */
export type PasskeyUsed = DomainEvent<'PasskeyUsed', { credential_id: string; counter: number; at: string }>;

/** The owner deleted the credential. */
export type PasskeyRemoved = DomainEvent<'PasskeyRemoved', { credential_id: string; at: string }>;

/** The maintainer vanished from the registry: all its credentials are taken back (lazily, at a login). */
export type PasskeysReclaimed = DomainEvent<'PasskeysReclaimed', { credential_ids: string[]; at: string }>;

export type MaintainerEvent = PasskeyRegistered | PasskeyUsed | PasskeyRemoved | PasskeysReclaimed;

/** The maintainer stream may come to hold other events of the maintainer; only these touch passkeys. */
export const MAINTAINER_PASSKEY_EVENTS: readonly string[] = [
  'PasskeyRegistered',
  'PasskeyUsed',
  'PasskeyRemoved',
  'PasskeysReclaimed',
] satisfies MaintainerEvent['type'][];

/** Marks a credential id as taken, service-wide (stream `passkey-credential-<sha256>`). */
export type PasskeyCredentialClaimed = DomainEvent<'PasskeyCredentialClaimed', { credential_id: string; mntner: string; at: string }>;

export interface Passkey {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  aaguid: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A maintainer's credentials, by id, in registration order. */
export interface MaintainerPasskeys {
  credentials: ReadonlyMap<string, Passkey>;
}

export function maintainerStreamId(mntner: string): string {
  return `maintainer-${mntner}`;
}

export function initialPasskeys(): MaintainerPasskeys {
  return { credentials: new Map() };
}

export function evolvePasskeys(state: MaintainerPasskeys, event: MaintainerEvent): MaintainerPasskeys {
  const credentials = new Map(state.credentials);
  switch (event.type) {
    case 'PasskeyRegistered': {
      const d = event.data;
      credentials.set(d.credential_id, {
        credentialId: d.credential_id,
        publicKey: d.public_key,
        counter: d.counter,
        transports: d.transports,
        aaguid: d.aaguid,
        label: d.label,
        createdAt: d.registered_at,
        lastUsedAt: null,
      });
      break;
    }
    case 'PasskeyUsed': {
      const known = credentials.get(event.data.credential_id);
      // The highest counter seen stays (events recorded before the decider kept the maximum may hold a lower one).
      if (known) credentials.set(known.credentialId, { ...known, counter: Math.max(known.counter, event.data.counter), lastUsedAt: event.data.at });
      break;
    }
    case 'PasskeyRemoved':
      credentials.delete(event.data.credential_id);
      break;
    case 'PasskeysReclaimed':
      for (const id of event.data.credential_ids) credentials.delete(id);
      break;
    default:
      return unreachable(event);
  }
  return { credentials };
}

/** Summary as the contract shows it. `disabled` has no transitions yet: always false. */
export function passkeySummary(p: Passkey): {
  credential_id: string;
  label: string;
  aaguid: string;
  created_at: string;
  last_used_at: string | null;
  disabled: boolean;
} {
  return { credential_id: p.credentialId, label: p.label, aaguid: p.aaguid, created_at: p.createdAt, last_used_at: p.lastUsedAt, disabled: false };
}
