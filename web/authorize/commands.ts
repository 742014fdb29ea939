/**
 * The shell commands the answer screen shows. They sign the nonce's exact bytes
 * (`printf '%s'`, no newline: `echo -n` is not portable across shells) so what
 * the user pastes back verifies as it is.
 */

export const SSH_NAMESPACE = 'dn42-autopeer';

/** POSIX single quotes: safe for any text, a `'` becomes `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The usual private key file of an OpenSSH public key type (`ssh-keygen`'s default names). */
export function defaultKeyFile(keyType: string): string {
  if (keyType.startsWith('ssh-ed25519')) return '~/.ssh/id_ed25519';
  if (keyType.startsWith('sk-ssh-ed25519')) return '~/.ssh/id_ed25519_sk';
  if (keyType.startsWith('sk-ecdsa')) return '~/.ssh/id_ecdsa_sk';
  if (keyType.startsWith('ecdsa-')) return '~/.ssh/id_ecdsa';
  if (keyType === 'ssh-rsa' || keyType.startsWith('rsa-')) return '~/.ssh/id_rsa';
  return '~/.ssh/id_ed25519';
}

/** The text as one shell word: as it is when it holds only safe characters, else quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : shellQuote(text);
}

/** `ssh-keygen -Y sign` over the nonce in the contract's namespace, reading stdin and writing the armored signature to stdout. */
export function sshSignCommand(nonce: string, keyType: string): string {
  return `printf '%s' ${shellQuote(nonce)} | ssh-keygen -Y sign -n ${SSH_NAMESPACE} -f ${defaultKeyFile(keyType)}`;
}

/** `gpg --clearsign` over the nonce with the registered key (fingerprint) chosen explicitly. */
export function pgpSignCommand(nonce: string, fingerprint: string): string {
  return `printf '%s' ${shellQuote(nonce)} | gpg --clearsign --local-user ${shellWord(fingerprint)}`;
}
