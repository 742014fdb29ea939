import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

// `Algorithm` is an ambient const enum, which isolated modules cannot read: 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

/**
 * Password hashing: argon2id with fixed parameters (OWASP's 19 MiB, 2 passes,
 * 1 lane). A known name and an unknown one cost the same: callers verify an
 * unknown name's password against `dummyHash()`, made with the same parameters.
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password or a hash that cannot be parsed; never throws for those. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /** A hash of a random secret nobody knows, with the parameters of real hashes. */
  dummyHash(): Promise<string>;
}

export const ARGON2_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function argon2Hasher(): PasswordHasher {
  let dummy: Promise<string> | undefined;
  return {
    hash: (password) => hash(password, ARGON2_OPTIONS),
    async verify(passwordHash, password) {
      try {
        return await verify(passwordHash, password);
      } catch {
        return false;
      }
    },
    dummyHash() {
      dummy ??= hash(randomBytes(32).toString('base64url'), ARGON2_OPTIONS);
      return dummy;
    },
  };
}
