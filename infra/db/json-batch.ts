/**
 * Many JSON documents as one statement parameter: their UTF-8 texts back to back
 * in one bytea (node-postgres sends a Buffer in binary, nothing escaped), with
 * each one's 1-based byte offset and length. SQL takes document k back with
 * `jsonbAt` below.
 *
 * The forms it replaces cost more than the documents: a `jsonb[]` or `text[]`
 * literal, whose every element the driver escapes character by character, and
 * one JSON array cast to jsonb, which PostgreSQL parses into a single large
 * value before `jsonb_array_elements` copies each element out again (1,000
 * desired states of 9 KB: about 1 s, against 0.3 s this way; bench `fleet-scale`).
 */
export interface JsonBatch {
  bytes: Buffer;
  offsets: number[];
  lengths: number[];
  /** The documents' JSON texts, in order. */
  texts: string[];
}

/**
 * Texts writers made of values they hand over, so that `jsonBatch` does not
 * serialise them again: a DNS group write publishes 1,000 documents that share
 * all but their `dns` section with the members' last ones, whose texts are
 * kept (`commands/materialised.ts`).
 */
const knownTexts = new WeakMap<object, string>();

/** `value`, whose JSON text is `text`: exactly `JSON.stringify(value)`, and the value does not change after. */
export function withJsonText<T extends object>(value: T, text: string): T {
  knownTexts.set(value, text);
  return value;
}

const textOf = (value: unknown): string => (typeof value === 'object' && value !== null && knownTexts.get(value)) || JSON.stringify(value ?? null);

export function jsonBatch(values: readonly unknown[]): JsonBatch {
  const texts = values.map(textOf);
  const offsets: number[] = [];
  const lengths: number[] = [];
  let at = 1;
  for (const text of texts) {
    const length = Buffer.byteLength(text, 'utf8');
    offsets.push(at);
    lengths.push(length);
    at += length;
  }
  // One allocation and one encode for all: a buffer per document and then their concatenation copied 100 MB twice at 10,000 nodes.
  return { bytes: Buffer.from(texts.join(''), 'utf8'), offsets, lengths, texts };
}

/** SQL for the document of a `jsonBatch` whose bytes, offset and length are the given expressions. */
export const jsonbAt = (bytes: string, offset: string, length: string): string =>
  `convert_from(substring(${bytes} FROM ${offset} FOR ${length}), 'UTF8')::jsonb`;
