/**
 * The browser's half of the passkey ceremonies. The options of `login/begin` and
 * `register/begin` go to the browser as they are, through the WebAuthn JSON
 * methods (`parse*OptionsFromJSON`, `toJSON`), so the credential reaches the
 * service whole and untrimmed. A browser without those methods, or a page outside
 * a secure context, counts as having no passkeys: the challenge flow still works.
 */

export function passkeysAvailable(): boolean {
  if (!globalThis.isSecureContext || typeof PublicKeyCredential === 'undefined' || !navigator.credentials) return false;
  // Older browsers lack the JSON methods that the DOM types declare.
  const json: Partial<typeof PublicKeyCredential> = PublicKeyCredential;
  return typeof json.parseRequestOptionsFromJSON === 'function' && typeof json.parseCreationOptionsFromJSON === 'function';
}

/** An assertion for the options of `login/begin`, as its JSON form. */
export async function getAssertion(options: Record<string, unknown>): Promise<unknown> {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options as unknown as PublicKeyCredentialRequestOptionsJSON);
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new DOMException('no credential', 'NotAllowedError');
  return credential.toJSON();
}

/** A new credential for the options of `register/begin`, as its JSON form (transports kept). */
export async function createCredential(options: Record<string, unknown>): Promise<unknown> {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options as unknown as PublicKeyCredentialCreationOptionsJSON);
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new DOMException('no credential', 'NotAllowedError');
  return credential.toJSON();
}

/** Words for a failed browser ceremony (the service was not asked). */
export function ceremonyProblem(err: unknown): string {
  const name = (err as { name?: string })?.name;
  switch (name) {
    case 'NotAllowedError':
    case 'AbortError':
      return 'The passkey prompt was closed or timed out. Try again, or choose another method.';
    case 'InvalidStateError':
      return 'This authenticator already holds a passkey for your maintainer.';
    case 'SecurityError':
      return 'Passkeys are not allowed on this address.';
    default:
      return `The passkey could not be used (${name ?? 'unknown error'}).`;
  }
}

const PASSKEY_ASNS_KEY = 'dn42.passkey-asns';

/** The AS numbers this browser used or saved a passkey for (local storage; none when it is unreadable). */
export function storedPasskeyAsns(): number[] {
  try {
    const list: unknown = JSON.parse(localStorage.getItem(PASSKEY_ASNS_KEY) ?? '[]');
    return Array.isArray(list) ? list.filter((a): a is number => Number.isInteger(a) && a >= 1 && a <= 4294967295) : [];
  } catch {
    return [];
  }
}

/** Keeps the list for the next visit; a browser that refuses storage just asks from the methods screen. */
export function storePasskeyAsns(list: readonly number[]): void {
  try {
    localStorage.setItem(PASSKEY_ASNS_KEY, JSON.stringify(list));
  } catch {
    // Storage off or full: nothing to keep, nothing breaks.
  }
}
