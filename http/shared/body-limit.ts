import express, { type RequestHandler } from 'express';

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
    parser = express.json({ limit: limitBytes });
    parsers.set(limitBytes, parser);
  }
  return parser;
}

/** `65536` → `64 KiB`, `8388608` → `8 MiB`: limits as the OpenAPI document and the 413 descriptions word them. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} bytes`;
}
