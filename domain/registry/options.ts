import { sha256Hex } from '../sha256.js';
import { classifyAuth } from './auth.js';
import type { AutNum, Contact, KeyCert, Mntner } from './objects.js';

/**
 * One way a maintainer can prove control of an ASN. The identity service reads
 * these, masks e-mail values before showing them, and refers to an option by `id`
 * when it issues a challenge.
 */
export interface VerificationOption {
  /** Stable while the option exists: derived from (mntner, kind, value), never from load order. */
  id: string;
  mntner: string;
  kind: 'email' | 'pgp' | 'ssh';
  /** `e-mail`, `pgp-fingerprint`, or the SSH key type (`ssh-ed25519`, `sk-ssh-ed25519@openssh.com`, ...). */
  method: string;
  /** Plain: the address, the 40-hex fingerprint, or `<type> <base64>` of the key. */
  value: string;
  /** A label: the person for e-mail, the key-cert for PGP, the key's comment for SSH. */
  comment: string;
  /** SSH `sk-*` keys (FIDO hardware keys): listed so the identity service can refuse them by name. */
  hardware_key: boolean;
}

/**
 * `<kind>-<24 hex>`: SHA-256 over mntner, kind and the normalised value. The same
 * option gets the same id in every sync, and a challenge made before a sync still
 * resolves after it as long as the option is there.
 */
export function optionId(mntner: string, kind: VerificationOption['kind'], value: string): string {
  const normalised = kind === 'email' ? value.trim().toLowerCase() : value;
  const digest = sha256Hex(`${mntner.toUpperCase()}\0${kind}\0${normalised}`);
  return `${kind}-${digest.slice(0, 24)}`;
}

/**
 * The PGP and SSH options of one maintainer, in the order of its `auth:` lines.
 * `PGPKEY-<id>` lines resolve through the key-cert of that name, whose fingerprint
 * must end with the id; a fingerprint reached twice counts once.
 */
export function authOptions(mntner: Mntner, keyCerts: ReadonlyMap<string, KeyCert>): VerificationOption[] {
  const out: VerificationOption[] = [];
  const add = (option: Omit<VerificationOption, 'id' | 'mntner'>) => {
    const id = optionId(mntner.name, option.kind, option.value);
    if (!out.some((o) => o.id === id)) out.push({ id, mntner: mntner.name, ...option });
  };
  for (const line of mntner.auth) {
    const auth = classifyAuth(line);
    switch (auth.kind) {
      case 'pgp':
        add({ kind: 'pgp', method: 'pgp-fingerprint', value: auth.fingerprint, comment: '', hardware_key: false });
        break;
      case 'pgp-key-cert': {
        const cert = keyCerts.get(auth.keyCert);
        if (cert?.fingerprint?.endsWith(auth.keyId)) {
          add({ kind: 'pgp', method: 'pgp-fingerprint', value: cert.fingerprint, comment: cert.name, hardware_key: false });
        }
        break;
      }
      case 'ssh':
        add({ kind: 'ssh', method: auth.method, value: auth.key, comment: auth.comment, hardware_key: auth.hardwareKey });
        break;
      case 'ignored':
        break;
      default: {
        const _never: never = auth;
        throw new Error(`unhandled auth ${JSON.stringify(_never)}`);
      }
    }
  }
  return out;
}

/**
 * Handles whose persons' addresses count for `mntner` on `autNum`: the aut-num's
 * admin-c and tech-c, then the maintainer's admin-c and tech-c, deduplicated in
 * that order. One hop only: a role (no e-mail) is not expanded, and nothing is
 * followed from a person onwards.
 */
export function contactHandles(autNum: AutNum, mntner: Mntner): string[] {
  const out: string[] = [];
  for (const h of [...autNum.adminC, ...autNum.techC, ...mntner.adminC, ...mntner.techC]) if (!out.includes(h)) out.push(h);
  return out;
}

export function emailOptions(mntner: string, handles: readonly string[], contacts: ReadonlyMap<string, Contact>): VerificationOption[] {
  const out: VerificationOption[] = [];
  for (const handle of handles) {
    const contact = contacts.get(handle);
    if (!contact || contact.kind !== 'person') continue;
    for (const address of contact.emails) {
      const id = optionId(mntner, 'email', address);
      if (out.some((o) => o.id === id)) continue;
      out.push({
        id,
        mntner,
        kind: 'email',
        method: 'e-mail',
        value: address,
        comment: contact.name ? `${contact.name} (${handle})` : handle,
        hardware_key: false,
      });
    }
  }
  return out;
}

/**
 * Every option of an ASN: per maintainer in `mnt-by` order (maintainers with no
 * mntner object are skipped), its PGP and SSH options, then its e-mail options.
 */
export function verificationOptions(
  autNum: AutNum,
  mntners: readonly Mntner[],
  auth: ReadonlyMap<string, readonly VerificationOption[]>,
  contacts: ReadonlyMap<string, Contact>,
): VerificationOption[] {
  const out: VerificationOption[] = [];
  for (const mntner of mntners) {
    out.push(...(auth.get(mntner.name) ?? []));
    out.push(...emailOptions(mntner.name, contactHandles(autNum, mntner), contacts));
  }
  return out;
}
