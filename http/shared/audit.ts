import type { RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import { auditScope, recordAudit, type PendingAudit } from '../../commands/audit.js';
import type { AuditRecorded } from '../../domain/audit/events.js';
import { clientAddress } from './client-address.js';
import type { ServiceContext } from './context.js';
import { requestMetadata } from './metadata.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The bound on refusals of unauthenticated clients (docs/decisions.md, HTTP
 * hardening): per window, at most `perAddress` entries one by one per client
 * address (IPv6 by /64) and `total` in all; the rest are counted and written as
 * one aggregate entry when the window ends.
 */
export const ANONYMOUS_REFUSALS = { perAddress: 5, total: 30, windowMs: 60_000, trackedAddresses: 1000 } as const;

/**
 * Records every write request. A write the request makes through `execute` carries
 * its entry in its own append (the router names the success status), so an
 * acknowledged write never lacks its entry. Requests without such an append, and
 * refused ones, are recorded after the response with their final status. The
 * middleware runs before authentication, so refusals are recorded too; the
 * authenticator names the actor in `res.locals.actor` when it knows one. Refusals
 * of unauthenticated clients go through a per-address bound (`ANONYMOUS_REFUSALS`).
 */
export function auditWrites(ctx: ServiceContext): RequestHandler {
  const refusals = anonymousRefusals(ctx);
  return (req, res, next) => {
    if (!WRITES.has(req.method)) return next();
    const path = req.originalUrl.split('?')[0];
    const pending: PendingAudit = {
      entry: () => {
        const actor = typeof res.locals.actor === 'string' ? res.locals.actor : `anonymous@${clientAddress(req)}`;
        const detail = typeof res.locals.auditDetail === 'string' ? res.locals.auditDetail : null;
        return { actor, method: req.method, path, detail };
      },
      open: () => !res.headersSent,
      at: ctx.now,
    };
    res.on('finish', () => {
      // The write's append carried the entry with this very status: nothing left to record.
      if (pending.written?.status === res.statusCode) return;
      const at = ctx.now();
      const metadata = requestMetadata(req, res, at);
      const entry = { ...pending.entry(), status_code: res.statusCode };
      if (res.statusCode >= 400 && res.locals.principal === undefined && !refusals.admit(metadata.clientAddress ?? 'unknown', entry, at)) return;
      // recordAudit names the entry's actor in the metadata too.
      afterResponse(ctx, () => recordAudit(ctx.store, entry, metadata, at)).catch((err) =>
        ctx.log.error({ err, requestId: req.id, path: entry.path.slice(0, 512) }, 'audit write failed'),
      );
    });
    auditScope.run(pending, next);
  };
}

// The tail of each service context's queue of entries written after the response.
const queues = new WeakMap<ServiceContext, Promise<unknown>>();

/**
 * Writes entries recorded after the response one after another, in the order the
 * responses finished: two requests answered one after the other get increasing
 * entry ids, whichever append would have been quicker. A failed write does not
 * hold up the ones behind it.
 */
function afterResponse(ctx: ServiceContext, write: () => Promise<void>): Promise<void> {
  const done = (queues.get(ctx) ?? Promise.resolve()).then(write);
  queues.set(
    ctx,
    done.catch(() => undefined),
  );
  return ctx.background.run(done);
}

/** Writes the aggregate entry of the current window's suppressed refusals now (tests, shutdown). */
export function flushAnonymousRefusals(ctx: ServiceContext): Promise<void> {
  return anonymousRefusals(ctx).flush();
}

// One bound per service context: `/admin` and `/auth` share it.
const limiters = new WeakMap<ServiceContext, RefusalLimiter>();

function anonymousRefusals(ctx: ServiceContext): RefusalLimiter {
  let limiter = limiters.get(ctx);
  if (!limiter) limiters.set(ctx, (limiter = new RefusalLimiter(ctx)));
  return limiter;
}

interface Suppressed {
  count: number;
  statuses: Map<number, number>;
  methods: Set<string>;
  paths: Set<string>;
}

class RefusalLimiter {
  private window = -1;
  private admitted = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly suppressed = new Map<string, Suppressed>();
  private suppressedCount = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: ServiceContext) {}

  /** True when this refusal gets an entry of its own; otherwise it is counted for the window's aggregate. */
  admit(address: string, entry: AuditRecorded['data'], at: Date): boolean {
    const window = Math.floor(at.getTime() / ANONYMOUS_REFUSALS.windowMs);
    if (window !== this.window) {
      void this.flush();
      this.window = window;
    }
    const key = addressKey(address);
    const seen = this.perAddress.get(key) ?? 0;
    if (seen < ANONYMOUS_REFUSALS.perAddress && this.admitted < ANONYMOUS_REFUSALS.total) {
      this.perAddress.set(key, seen + 1);
      this.admitted++;
      return true;
    }
    const bucketKey = this.suppressed.has(key) || this.suppressed.size < ANONYMOUS_REFUSALS.trackedAddresses ? key : '*';
    let bucket = this.suppressed.get(bucketKey);
    if (!bucket) this.suppressed.set(bucketKey, (bucket = { count: 0, statuses: new Map(), methods: new Set(), paths: new Set() }));
    bucket.count++;
    bucket.statuses.set(entry.status_code, (bucket.statuses.get(entry.status_code) ?? 0) + 1);
    if (bucket.methods.size < 8) bucket.methods.add(entry.method);
    if (bucket.paths.size < 2) bucket.paths.add(entry.path);
    this.suppressedCount++;
    this.timer ??= setTimeout(() => void this.flush(), ANONYMOUS_REFUSALS.windowMs).unref();
    return false;
  }

  /** One entry for every refusal of the window that was counted, not recorded. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const count = this.suppressedCount;
    const buckets = [...this.suppressed.entries()].sort((a, b) => b[1].count - a[1].count);
    const from = new Date(Math.max(this.window, 0) * ANONYMOUS_REFUSALS.windowMs);
    this.perAddress.clear();
    this.suppressed.clear();
    this.suppressedCount = 0;
    this.admitted = 0;
    if (count === 0) return Promise.resolve();
    const statuses = new Map<number, number>();
    const methods = new Set<string>();
    const paths = new Set<string>();
    for (const [, b] of buckets) {
      for (const [s, n] of b.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
      for (const m of b.methods) methods.add(m);
      for (const p of b.paths) paths.add(p);
    }
    const status = [...statuses.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const top = buckets.slice(0, 10).map(([key, b]) => `${key} ×${b.count}`);
    const more = buckets.length > 10 ? `, ${buckets.length - 10} more addresses` : '';
    const to = new Date(from.getTime() + ANONYMOUS_REFUSALS.windowMs);
    const detail =
      `${count} more refused requests of unauthenticated clients between ${from.toISOString()} and ${to.toISOString()}, counted, not recorded one by one ` +
      `(over ${ANONYMOUS_REFUSALS.perAddress} per address or ${ANONYMOUS_REFUSALS.total} in all per minute): ${top.join(', ')}${more}; statuses ${[...statuses.entries()].map(([s, n]) => `${s} ×${n}`).join(', ')}`;
    const entry = {
      actor: buckets.length === 1 ? `anonymous@${buckets[0][0]}` : 'anonymous',
      method: methods.size === 1 ? [...methods][0] : '*',
      path: paths.size === 1 ? [...paths][0] : '*',
      status_code: status,
      detail,
    };
    const at = this.ctx.now();
    return afterResponse(this.ctx, () =>
      recordAudit(this.ctx.store, entry, { actor: entry.actor, ...(buckets.length === 1 ? { clientAddress: buckets[0][0] } : {}) }, at),
    ).catch((err) => this.ctx.log.error({ err, count }, 'audit aggregate write failed'));
  }
}

/** The unit a client is counted by: an IPv4 address, an IPv6 /64 (one host usually holds a whole /64). */
function addressKey(address: string): string {
  if (!ipaddr.IPv6.isValid(address) || ipaddr.IPv4.isValidFourPartDecimal(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toRFC5952String()}/64`;
}
