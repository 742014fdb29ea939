import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { auditStreamId, type AuditRecorded } from '../domain/audit/events.js';
import type { AppendResult, EventMetadata, EventStore, StreamWrite } from '../infra/eventstore/types.js';

/** Longest `path` an audit entry keeps; a longer one is cut and marked with `…`. */
export const AUDIT_PATH_LIMIT = 512;
/** Longest `actor` and `detail` an audit entry keeps. */
export const AUDIT_TEXT_LIMIT = 1024;

/**
 * Appends one audit entry to the day's stream. Audit streams only grow and have no
 * invariant, so the append expects `any` version and never conflicts.
 */
export async function recordAudit(store: EventStore, entry: AuditRecorded['data'], metadata: EventMetadata, at: Date): Promise<void> {
  await store.append([{ streamId: auditStreamId(at), expected: 'any', events: [{ type: 'AuditRecorded', data: storableEntry(entry) }] }], {
    ...metadata,
    actor: storableText(entry.actor, AUDIT_TEXT_LIMIT),
    recordedAt: at.toISOString(),
  });
}

/** What the decision of an audited request says about the audit entry its append carries. */
export interface DecisionAudit {
  /** The append records a refusal (a counted login failure): the request fails, so the entry is written after the response with its final status. */
  refused?: boolean;
  /** The entry's actor when it differs from the request's (a login names the account it signs in). */
  actor?: string;
  detail?: string;
}

/**
 * An audited request whose entry is still to be written. The audit middleware
 * opens it; the router names the status the request answers when its write is
 * acknowledged; `execute` puts the entry in the write's own append, so the write
 * and its entry commit (or vanish) together.
 */
export interface PendingAudit {
  /** The entry as far as it is known now (actor and detail can change while the request runs). */
  entry(): Omit<AuditRecorded['data'], 'status_code'>;
  /** The status of the request's success answer, set by the router; undefined: not known, the entry waits for the response. */
  successStatus?: number;
  /** False once the answer has started: a later append (background work) is not this request's write. */
  open(): boolean;
  /** Set once an append carried the entry. */
  written?: { status: number };
  at(): Date;
}

/** The audited request the current async context serves, if any. */
export const auditScope = new AsyncLocalStorage<PendingAudit>();

/**
 * The audit write `execute` adds to a decision's append, or undefined when the
 * request is not audited, its entry is already written, its success status is not
 * known, or the decision records a refusal. Each entry has a stream of its own
 * (`audit-<day>-<uuid>`), so concurrent writes never queue on a shared audit stream.
 * `carried` takes the committed append and returns it without the entry.
 */
export function pendingAuditWrite(decision: { audit?: DecisionAudit }): { write: StreamWrite; carried(append: AppendResult): AppendResult } | undefined {
  const pending = auditScope.getStore();
  if (!pending || pending.written || pending.successStatus === undefined || !pending.open() || decision.audit?.refused) return undefined;
  const status = pending.successStatus;
  const base = pending.entry();
  const entry = storableEntry({ ...base, actor: decision.audit?.actor ?? base.actor, detail: decision.audit?.detail ?? base.detail, status_code: status });
  const streamId = `${auditStreamId(pending.at())}-${randomUUID()}`;
  return {
    write: { streamId, expected: 'no_stream', events: [{ type: 'AuditRecorded', data: entry }] },
    // The command's result describes its own write: the entry is left out of it.
    carried: (append) => {
      pending.written = { status };
      const { [streamId]: _audit, ...versions } = append.versions;
      return { versions, events: append.events.filter((e) => e.streamId !== streamId) };
    },
  };
}

/** An entry PostgreSQL can store and a flood cannot inflate: well-formed text without NUL, path and texts cut to their limits. */
export function storableEntry(entry: AuditRecorded['data']): AuditRecorded['data'] {
  return {
    actor: storableText(entry.actor, AUDIT_TEXT_LIMIT),
    method: storableText(entry.method, 16),
    path: storableText(entry.path, AUDIT_PATH_LIMIT),
    status_code: entry.status_code,
    detail: entry.detail === null ? null : storableText(entry.detail, AUDIT_TEXT_LIMIT),
  };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as PostgreSQL stores it: lone surrogates and NUL become U+FFFD (a cut may split a pair: cleaned after it). */
const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\uFFFD').replaceAll('\u0000', '\uFFFD');

function storableText(text: string, limit: number): string {
  const clean = wellFormed(text);
  return clean.length <= limit ? clean : `${wellFormed(clean.slice(0, limit - 1))}…`;
}
