import { parseInstant } from '../series/placement.js';
import { decayTo } from './prefix-scores.js';
import type { SessionRestart } from '../telemetry/health.js';
import type { BgpState } from '../telemetry/reports.js';

/**
 * Session-level flap rules (document 3, "Flap scores"): pure, shared by the
 * read model (projections/session-flaps) and the views. The prefix level and
 * the alerts reuse `decayScore` with their own thresholds.
 */

export interface FlapThresholds {
  halfLifeSeconds: number;
  /** `flapping` true at or above. */
  listLine: number;
  alertOpen: number;
  alertClose: number;
}

/** Document 3's session half-life: 30 minutes. */
export const SESSION_HALF_LIFE_SECONDS = 1800;

export const SESSION_FLAP: FlapThresholds = { halfLifeSeconds: SESSION_HALF_LIFE_SECONDS, listLine: 3, alertOpen: 3, alertClose: 1.5 };

/**
 * Speeds up the session flap clock by `scale` (the `FLAP_TIME_SCALE` setting,
 * for labs and demos: a half-life of 1800 / scale seconds), process-wide. The
 * composition root calls it once at start, before any score is read or
 * written; 1 (production) is document 3's half-life.
 */
export function setSessionFlapTimeScale(scale: number): void {
  if (!Number.isFinite(scale) || scale < 1) throw new RangeError(`flap time scale must be at least 1 (got ${scale})`);
  SESSION_FLAP.halfLifeSeconds = SESSION_HALF_LIFE_SECONDS / scale;
}

/** `score` recorded at `at`, decayed to `now` (never grown: a `now` before `at` answers the score as recorded). */
export function decayScore(score: number, at: Date, now: Date, halfLifeSeconds: number): number {
  return decayTo(score, at.getTime(), now.getTime(), halfLifeSeconds);
}

/** A stored score: its value as of `at` (null: no flap yet). */
export interface StoredScore {
  score: number;
  at: Date | null;
}

/**
 * The stored score after one more flap at `flapAt`, kept as of the latest flap:
 * a flap after `at` decays the old score to `flapAt` and adds 1; a flap before
 * `at` (a late report) adds its own weight decayed to `at`. Either way the score
 * read at any time after both is the sum of `2^(-age / half-life)` over the flaps,
 * whatever order they arrive in.
 */
export function addFlap(stored: StoredScore, flapAt: Date, halfLifeSeconds: number): StoredScore {
  if (!stored.at) return { score: 1, at: flapAt };
  if (flapAt.getTime() >= stored.at.getTime()) return { score: decayScore(stored.score, stored.at, flapAt, halfLifeSeconds) + 1, at: flapAt };
  return { score: stored.score + decayScore(1, flapAt, stored.at, halfLifeSeconds), at: stored.at };
}

/**
 * The time a transition's flap counts from (document 3: a transition's
 * `captured_at` is its snapshot time): the agent's `captured_at`, but never
 * after `receivedAt`, the server time of the report (as samples are placed,
 * domain/series/placement.ts: a clock ahead of the server is clamped to the
 * server's now), so a clock ahead cannot make a flap look newer than it can be.
 * A missing or unreadable `captured_at` counts from `receivedAt`.
 */
export function flapTime(capturedAt: string | undefined, receivedAt: Date): Date {
  const t = capturedAt === undefined ? Number.NaN : parseInstant(capturedAt);
  return Number.isNaN(t) || t > receivedAt.getTime() ? receivedAt : new Date(t);
}

export type TransitionKind = 'state' | 'restart';

/**
 * What counts for the score: leaving Established (one flap however many
 * states the session passes before it is back) and a restart (both snapshots
 * Established, `since` changed). Entering Established and moves among the
 * non-established states are transitions but not flaps, so a session that
 * drops and comes back counts once.
 */
export function isFlap(kind: TransitionKind, from: BgpState, to: BgpState): boolean {
  return kind === 'restart' || (from === 'established' && to !== 'established');
}

/** Sessions Established in both snapshots whose `since` changed (both known): an implicit reconnect between them. Sorted by name. */
export function detectRestarts(
  previous: readonly { name: string; state: BgpState; since?: string | null }[],
  current: readonly { name: string; state: BgpState; since?: string | null }[],
): SessionRestart[] {
  const before = new Map(previous.map((p) => [p.name, p]));
  const restarted: SessionRestart[] = [];
  for (const p of current) {
    const b = before.get(p.name);
    if (!b || b.state !== 'established' || p.state !== 'established' || !b.since || !p.since) continue;
    if (new Date(b.since).getTime() !== new Date(p.since).getTime()) restarted.push({ session: p.name, since_before: b.since, since_after: p.since });
  }
  return restarted.sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
}

export type SessionHealth = 'up' | 'connecting' | 'down' | 'unknown';

/** Document 3, session health: established up; the handshake states connecting; idle and down down; no data unknown. */
export function sessionHealth(state: BgpState | null | undefined): SessionHealth {
  switch (state) {
    case 'established':
      return 'up';
    case 'connect':
    case 'active':
    case 'opensent':
    case 'openconfirm':
      return 'connecting';
    case 'idle':
    case 'down':
      return 'down';
    default:
      return 'unknown';
  }
}

export type SessionKind = 'ebgp' | 'ibgp';

/**
 * iBGP neighbours are the protocols named `ibgp_` (domain/desired-state/bird-names.ts,
 * shown without apostrophes); every other BGP protocol is a session to a peer AS.
 */
export function sessionKind(name: string): SessionKind {
  return name.replace(/^'/, '').startsWith('ibgp_') ? 'ibgp' : 'ebgp';
}

/** Peering issue classes in their order (document 3, `/fleet/peering-issues`). */
export type IssueClass = 'flapping' | 'down' | 'connecting';

/** A session's issue class, or null when it is no issue (Established and not flapping). Unknown state counts as down. */
export function issueClass(health: SessionHealth, flapping: boolean): IssueClass | null {
  if (flapping) return 'flapping';
  if (health === 'up') return null;
  return health === 'connecting' ? 'connecting' : 'down';
}

export interface IssueKey {
  class: IssueClass;
  kind: SessionKind;
  flap_score: number | null;
  node_id: string;
  name: string;
}

const CLASS_ORDER: readonly IssueClass[] = ['flapping', 'down', 'connecting'];

/** Flapping first, then down, then connecting; within a class eBGP before iBGP, flapping ones by score descending; then node and name. */
export function compareIssues(a: IssueKey, b: IssueKey): number {
  return (
    CLASS_ORDER.indexOf(a.class) - CLASS_ORDER.indexOf(b.class) ||
    (a.kind === b.kind ? 0 : a.kind === 'ebgp' ? -1 : 1) ||
    (a.class === 'flapping' ? (b.flap_score ?? 0) - (a.flap_score ?? 0) : 0) ||
    (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}
