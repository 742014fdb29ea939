import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/** A generated answer: the serialised body, its entity tag and when it was made. */
interface Entry {
  at: number;
  body: Buffer;
  etag: string;
}

/**
 * An in-process cache of one public answer. A hit returns the stored bytes
 * unchanged, so the document's own time field is the time it was generated.
 * Concurrent misses share one computation. Each app has its own cache; several
 * instances may each hold a copy for up to the TTL, which public data allows.
 */
export class PublicCache {
  private entry?: Entry;
  private pending?: Promise<Entry>;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => Date,
    private readonly build: (at: Date) => Promise<unknown>,
  ) {}

  /** The cached entry while younger than the TTL (a clock that went back counts as expired), else a fresh one. */
  get(): Entry | Promise<Entry> {
    const at = this.now();
    const age = at.getTime() - (this.entry?.at ?? Number.NEGATIVE_INFINITY);
    if (this.entry && age >= 0 && age < this.ttlMs) return this.entry;
    this.pending ??= this.generate(at).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async generate(at: Date): Promise<Entry> {
    const body = Buffer.from(JSON.stringify(await this.build(at)));
    const entry = { at: at.getTime(), body, etag: `W/"${createHash('sha1').update(body).digest('base64url')}"` };
    this.entry = entry;
    return entry;
  }
}

/** Answers from the cache with the contract's `Cache-Control` (and 304 for a matching `If-None-Match`). */
export async function sendCached(cache: PublicCache, cacheControl: string, req: Request, res: Response): Promise<void> {
  const entry = await cache.get();
  res.set({ 'Cache-Control': cacheControl, ETag: entry.etag, 'Content-Type': 'application/json; charset=utf-8' });
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  res.send(entry.body);
}
