import { createHash, randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { COSEALG } from '@simplewebauthn/server/helpers';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../domain/errors.js';
import {
  CEREMONY_NOT_FOUND,
  ceremonyStreamId,
  decideCeremony,
  foldCeremony,
  type CeremonyCommand,
  type CeremonyKind,
  type PasskeyCeremonyStarted,
} from '../../domain/identity/passkeys-ceremony.js';
import { PASSKEY_ALREADY_REGISTERED, PASSKEY_NOT_FOUND, decidePasskeys, foldPasskeys, type PasskeyCommand } from '../../domain/identity/passkeys-decide.js';
import { maintainerStreamId, passkeySummary, type MaintainerPasskeys, type Passkey, type PasskeyCredentialClaimed } from '../../domain/identity/passkeys.js';
import { sha256Hex } from '../../domain/sha256.js';
import type { Config } from '../../infra/config.js';
import type { EventMetadata, EventStore } from '../../infra/eventstore/types.js';
import type { Logger } from '../../infra/logger.js';
import { registryClient } from '../../infra/registry/client.js';
import { execute, load } from '../handle.js';
import { issueSession, type SessionDeps, type SessionGrant } from './sessions.js';

/** Contract rule 5: any verification failure is this one answer; the reason goes to the log. */
export const VERIFICATION_FAILED = 'passkey verification failed';
export const NO_PASSKEY = 'no passkey for this ASN';
export const AUTHORIZATION_LAPSED = 'maintainer no longer authorised for this ASN';
export const NO_MAINTAINER = 'session has no maintainer';

/** What the passkey ceremonies need: the event store, the session signer's deps (a login ends with a session), the registry replica's address and a log. */
export interface PasskeyDeps extends SessionDeps {
  store: EventStore;
  log: Logger;
}

const RP_NAME = 'dn42 identity';
/**
 * The public-key algorithms offered and accepted: EdDSA, ES256, RS256 on every
 * runtime. The library's default adds ML-DSA-44 where WebCrypto has it (Node 24),
 * an experimental algorithm whose probe prints an ExperimentalWarning.
 */
export const PASSKEY_ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];
const CEREMONY_ID = /^[A-Za-z0-9_-]{22}$/;

/** Relying party: id = host of the issuer (never the Host header); origins from WEBAUTHN_ORIGINS, else the issuer's origin. */
export function relyingParty(config: Config): { id: string; origins: string[] } {
  const issuer = new URL(config.identityIssuer);
  return { id: issuer.hostname, origins: config.webauthnOrigins ?? [issuer.origin] };
}

export type PasskeySummary = ReturnType<typeof passkeySummary>;

export async function maintainerPasskeys(deps: Pick<PasskeyDeps, 'store'>, mntner: string): Promise<MaintainerPasskeys> {
  return foldPasskeys((await load(deps.store, maintainerStreamId(mntner))).events);
}

/** True when the maintainer has at least one registered passkey. */
export async function maintainerHasPasskeys(deps: Pick<PasskeyDeps, 'store'>, mntner: string): Promise<boolean> {
  return (await maintainerPasskeys(deps, mntner)).credentials.size > 0;
}

export async function listPasskeys(deps: Pick<PasskeyDeps, 'store'>, mntner: string): Promise<PasskeySummary[]> {
  return [...(await maintainerPasskeys(deps, mntner)).credentials.values()].map(passkeySummary);
}

/** Applies one command to a maintainer's passkeys (load, fold, decide, append with the expected version); answers the passkeys after it. */
async function onMaintainer(
  deps: PasskeyDeps,
  mntner: string,
  command: PasskeyCommand,
  metadata: EventMetadata,
  extra: (streams: Record<string, { version: number }>) => { streamId: string; events: PasskeyCredentialClaimed[] }[] = () => [],
): Promise<MaintainerPasskeys> {
  const stream = maintainerStreamId(mntner);
  const claims = command.type === 'RegisterPasskey' ? [credentialClaimStream(command.passkey.credential_id)] : [];
  const { result } = await execute(
    deps.store,
    [stream, ...claims],
    (streams) => {
      const events = decidePasskeys(command, foldPasskeys(streams[stream].events));
      return { writes: [{ streamId: stream, events }, ...extra(streams)], result: [...streams[stream].events, ...events] };
    },
    metadata,
  );
  return foldPasskeys(result);
}

function credentialClaimStream(credentialId: string): string {
  return `passkey-credential-${sha256Hex(credentialId)}`;
}

function newCeremonyId(): string {
  return randomBytes(16).toString('base64url');
}

async function startCeremony(
  deps: PasskeyDeps,
  ceremony: Omit<PasskeyCeremonyStarted['data'], 'started_at' | 'expires_at'>,
  metadata: EventMetadata,
): Promise<void> {
  const stream = ceremonyStreamId(ceremony.ceremony_id);
  const command: CeremonyCommand = { type: 'StartCeremony', ceremony, now: deps.now() };
  await execute(
    deps.store,
    [stream],
    (s) => ({ writes: [{ streamId: stream, events: decideCeremony(command, foldCeremony(s[stream].events)) }], result: undefined }),
    metadata,
  );
}

/**
 * Consumes a ceremony before anything is verified, so a failed finish burns it
 * too (single use). Race: two finishes of one ceremony both read it unconsumed;
 * the append with the expected version lets one win, the other re-reads and gets 404.
 */
async function consumeCeremony(
  deps: PasskeyDeps,
  id: string,
  kind: CeremonyKind,
  mntner: string | undefined,
  metadata: EventMetadata,
): Promise<PasskeyCeremonyStarted['data']> {
  if (!CEREMONY_ID.test(id)) throw new NotFound(CEREMONY_NOT_FOUND);
  const stream = ceremonyStreamId(id);
  const command: CeremonyCommand = { type: 'ConsumeCeremony', kind, mntner, now: deps.now() };
  const { result } = await execute(
    deps.store,
    [stream],
    (s) => {
      const state = foldCeremony(s[stream].events);
      const events = decideCeremony(command, state);
      return { writes: [{ streamId: stream, events }], result: state.status === 'Started' ? state.ceremony : undefined };
    },
    metadata,
  );
  return result!;
}

function refuse(deps: PasskeyDeps, metadata: EventMetadata, reason: string, err?: unknown): never {
  deps.log.info({ err, reason, requestId: metadata.requestId, client: metadata.clientAddress }, 'passkey verification failed');
  throw new BadRequest(VERIFICATION_FAILED);
}

export async function beginRegistration(
  deps: PasskeyDeps,
  mntner: string | undefined,
  metadata: EventMetadata,
): Promise<{ ceremony_id: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  if (!mntner) throw new BadRequest(NO_MAINTAINER);
  const rp = relyingParty(deps.config);
  const existing = [...(await maintainerPasskeys(deps, mntner)).credentials.values()];
  const ceremonyId = newCeremonyId();
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: mntner,
    userDisplayName: mntner,
    // A stable user handle per maintainer: an authenticator keeps one resident credential per (rp, user).
    userID: createHash('sha256').update(`dn42-mntner:${mntner}`).digest(),
    attestationType: 'none',
    timeout: 5 * 60 * 1000,
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
  await startCeremony(deps, { ceremony_id: ceremonyId, kind: 'registration', challenge: options.challenge, mntner }, metadata);
  return { ceremony_id: ceremonyId, options };
}

export async function finishRegistration(
  deps: PasskeyDeps,
  mntner: string | undefined,
  input: { ceremony_id: string; credential: Record<string, unknown>; label?: string },
  metadata: EventMetadata,
): Promise<PasskeySummary> {
  if (!mntner) throw new BadRequest(NO_MAINTAINER);
  const ceremony = await consumeCeremony(deps, input.ceremony_id, 'registration', mntner, metadata);
  const rp = relyingParty(deps.config);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: input.credential as unknown as RegistrationResponseJSON,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
  } catch (err) {
    refuse(deps, metadata, 'registration response rejected', err);
  }
  if (!verified.verified) refuse(deps, metadata, 'registration response not verified');
  const info = verified.registrationInfo;
  const transports = (input.credential.response as { transports?: unknown } | undefined)?.transports;
  const passkey = {
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: Array.isArray(transports) ? transports.filter((t): t is string => typeof t === 'string') : [],
    aaguid: info.aaguid,
    label: input.label ?? 'passkey',
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    credential: input.credential,
  };
  const now = deps.now();
  const claimStream = credentialClaimStream(passkey.credential_id);
  const after = await onMaintainer(deps, mntner, { type: 'RegisterPasskey', passkey, now }, metadata, (streams) => {
    // The same credential id under another maintainer (or registered before and deleted): 409 as well.
    if (streams[claimStream].version >= 0) throw new Conflict(PASSKEY_ALREADY_REGISTERED);
    return [
      { streamId: claimStream, events: [{ type: 'PasskeyCredentialClaimed', data: { credential_id: passkey.credential_id, mntner, at: now.toISOString() } }] },
    ];
  });
  return passkeySummary(after.credentials.get(passkey.credential_id)!);
}

export async function deletePasskey(deps: PasskeyDeps, mntner: string | undefined, credentialId: string, metadata: EventMetadata): Promise<void> {
  // Without a maintainer nothing is yours: not found.
  if (!mntner) throw new NotFound(PASSKEY_NOT_FOUND);
  await onMaintainer(deps, mntner, { type: 'RemovePasskey', credentialId, now: deps.now() }, metadata);
}

/**
 * Login begin: the credentials of every maintainer the registry lists for the
 * ASN right now. Unknown ASN and no usable credential are the same 404 (clients
 * fall back silently); an unreachable registry is 503.
 */
export async function beginLogin(
  deps: PasskeyDeps,
  asn: number,
  metadata: EventMetadata,
): Promise<{ ceremony_id: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const autNum = await registryClient(deps.config, deps.log).asn(asn);
  if (!autNum) throw new NotFound(NO_PASSKEY);
  const allowed: { credential_id: string; mntner: string; passkey: Passkey }[] = [];
  for (const mntner of new Set(autNum.mnt_by)) {
    for (const passkey of (await maintainerPasskeys(deps, mntner)).credentials.values()) allowed.push({ credential_id: passkey.credentialId, mntner, passkey });
  }
  if (allowed.length === 0) throw new NotFound(NO_PASSKEY);
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps.config).id,
    allowCredentials: allowed.map((a) => ({ id: a.credential_id, transports: a.passkey.transports })),
    userVerification: 'preferred',
    timeout: 5 * 60 * 1000,
  });
  const ceremonyId = newCeremonyId();
  await startCeremony(
    deps,
    {
      ceremony_id: ceremonyId,
      kind: 'authentication',
      challenge: options.challenge,
      asn,
      allowed: allowed.map(({ credential_id, mntner }) => ({ credential_id, mntner })),
    },
    metadata,
  );
  return { ceremony_id: ceremonyId, options };
}

/**
 * Login finish: verify the assertion against the stored credential, then ask the
 * registry again whether the credential's maintainer still holds the ASN (403 if
 * not; a maintainer gone from the registry loses all its credentials), then issue
 * a session with method `passkey`.
 */
export async function finishLogin(
  deps: PasskeyDeps,
  input: { ceremony_id: string; credential: Record<string, unknown> },
  metadata: EventMetadata,
): Promise<SessionGrant> {
  const ceremony = await consumeCeremony(deps, input.ceremony_id, 'authentication', undefined, metadata);
  const offered = ceremony.allowed?.find((a) => a.credential_id === input.credential.id);
  if (!offered || ceremony.asn === undefined) refuse(deps, metadata, 'credential was not offered by this ceremony');
  const passkey = (await maintainerPasskeys(deps, offered.mntner)).credentials.get(offered.credential_id);
  if (!passkey) refuse(deps, metadata, 'credential was removed after login began');
  const rp = relyingParty(deps.config);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: input.credential as unknown as AuthenticationResponseJSON,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: false,
    });
  } catch (err) {
    refuse(deps, metadata, 'authentication response rejected', err);
  }
  if (!verified.verified) refuse(deps, metadata, 'authentication response not verified');

  const client = registryClient(deps.config, deps.log);
  const autNum = await client.asn(ceremony.asn);
  if (!autNum?.mnt_by.includes(offered.mntner)) {
    deps.log.info({ asn: ceremony.asn, mntner: offered.mntner, requestId: metadata.requestId }, 'passkey login refused: maintainer no longer holds the ASN');
    await reclaimIfVanished(deps, client, offered.mntner, metadata);
    throw new Forbidden(AUTHORIZATION_LAPSED);
  }
  await onMaintainer(
    deps,
    offered.mntner,
    { type: 'RecordPasskeyUse', credentialId: passkey.credentialId, counter: verified.authenticationInfo.newCounter, now: deps.now() },
    metadata,
  ).catch((err) => {
    // Deleted between the verification and now: the login still proved possession a moment ago, but the credential is gone.
    if (err instanceof NotFound) refuse(deps, metadata, 'credential was removed during login', err);
    throw err;
  });
  return issueSession(deps, { asn: ceremony.asn, mntner: offered.mntner, method: 'passkey' });
}

/**
 * Lazy reclaim after a lapsed login: a maintainer gone from the registry loses
 * all its credentials. Best effort: the lapse is already established, so the
 * answer is 403 whether or not this lookup or append works; a failure is logged
 * and the next refused login tries again.
 */
async function reclaimIfVanished(deps: PasskeyDeps, client: ReturnType<typeof registryClient>, mntner: string, metadata: EventMetadata): Promise<void> {
  try {
    if ((await client.mntner(mntner)) === null) await onMaintainer(deps, mntner, { type: 'ReclaimPasskeys', now: deps.now() }, metadata);
  } catch (err) {
    deps.log.warn({ err, mntner, requestId: metadata.requestId }, 'passkey reclaim skipped: maintainer lookup or append failed');
  }
}
