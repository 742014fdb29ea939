import express, { type RequestHandler } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const KiB = 1024;
export const MiB = 1024 * KiB;

/**
 * The JSON body limit of a route that names none (`RouteSpec.bodyLimit`): logins,
 * tokens and small admin writes are well under 10 KiB; 64 KiB leaves room for the
 * longest free text fields and lists of a few hundred names.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * KiB;

const parsers = new Map<number, RequestHandler>();

/**
 * The JSON body parser of one route, limited to `limitBytes`: a declared
 * `Content-Length` above it is refused before a byte is read, a chunked body as
 * soon as it passes the limit; either way with 413 `request body too large`
 * (`mapError`), the rest of the body being read and dropped, never buffered.
 * Bodies of other media types (multipart uploads) are left to the route.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  let parser = parsers.get(limitBytes);
  if (!parser) {
    parser = express.json({ limit: limitBytes, verify: noteEscapes });
    parsers.set(limitBytes, parser);
  }
  return parser;
}

const TEXTS_STORABLE = Symbol('texts storable');

/**
 * Looks at the raw body before it is parsed (issue 30: a 1,500-route table has
 * 15,000 strings and keys to check one by one otherwise). A UTF-8 body with no
 * `\u` escape cannot hold NUL in a string (JSON refuses it unescaped) nor a lone
 * surrogate (the decoder replaces bytes that are not UTF-8, encoded surrogates
 * included, with U+FFFD): `checkStorable` then checks only numbers and nesting.
 */
function noteEscapes(req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string): void {
  (req as IncomingMessage & { [TEXTS_STORABLE]?: boolean })[TEXTS_STORABLE] = encoding === 'utf-8' && body.indexOf('\\u') === -1;
}

/** True when the request's JSON body was seen to hold no string `checkStorable` would refuse (`noteEscapes`). */
export function bodyTextsStorable(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [TEXTS_STORABLE]?: boolean })[TEXTS_STORABLE] === true;
}

/** `65536` → `64 KiB`, `8388608` → `8 MiB`: limits as the OpenAPI document and the 413 descriptions word them. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} bytes`;
}
