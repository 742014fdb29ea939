import type pg from 'pg';
import type { Doorbell } from '../domain/doorbell.js';
import { sha256Hex } from '../domain/sha256.js';
import { Validation } from '../domain/errors.js';
import type { ReleaseManifest } from '../domain/release/manifest.js';
import { checkFileName, checkVersion, compareVersions, needsUpdate } from '../domain/release/rules.js';
import { agentStatuses, livenessOf, type Liveness } from '../infra/telemetry/liveness.js';
import { claimOffer, clearOffers, manifestOf, releaseOffer, releaseVersions, saveRelease, saveTarget, targetVersion } from '../infra/releases/store.js';
import { targetVersionCache } from '../infra/releases/target-cache.js';
import { connectedNodes } from '../infra/agent-hub/presence.js';
import { listNodes } from '../projections/fleet/queries.js';

/** What release commands need: the database (uploads replace files in one transaction), the doorbell for offers, the service clock. */
export interface ReleaseDeps {
  pool: pg.Pool;
  doorbell: Doorbell;
  now: () => Date;
}

export interface UploadedFile {
  filename: string;
  content: Buffer;
}

/** File names are ASCII (allow-list): code unit order is byte order, the same as the store's `COLLATE "C"`. */
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `POST /admin/agent-releases`: stores the files of a version (replacing an earlier upload) and answers its manifest. Does not roll out. */
export async function uploadRelease(deps: ReleaseDeps, version: string, files: readonly UploadedFile[]): Promise<ReleaseManifest> {
  checkVersion(version);
  if (files.length === 0)
    throw new Validation('invalid files: at least one file is required', [{ loc: ['body', 'files'], msg: 'at least one file', type: 'minItems' }]);
  const seen = new Set<string>();
  for (const f of files) {
    checkFileName(f.filename);
    if (seen.has(f.filename))
      throw new Validation(`invalid files: ${f.filename} given twice`, [{ loc: ['body', 'files'], msg: 'duplicate file name', type: 'uniqueItems' }]);
    seen.add(f.filename);
  }
  const stored = files
    .map((f) => ({ filename: f.filename, sha256: sha256Hex(f.content), size: f.content.length, content: f.content }))
    .sort((a, b) => byteOrder(a.filename, b.filename));
  await saveRelease(deps.pool, version, stored, deps.now());
  return { version, wheels: stored.map(({ filename, sha256, size }) => ({ filename, sha256, size })) };
}

/**
 * `POST /admin/agent-releases/target`: sets the global target (never lower
 * than the current one), re-arms its
 * offers, and offers it to the agents online now whose last heartbeat reported
 * an older version (the others get it with their next heartbeat).
 */
export async function setTarget(deps: ReleaseDeps, version: string): Promise<{ target: string; offered: string[] }> {
  checkVersion(version);
  const saved = await saveTarget(deps.pool, version, deps.now());
  if (saved.outcome === 'not_uploaded') {
    throw new Validation(`invalid version: ${version} has not been uploaded`, [
      { loc: ['body', 'version'], msg: 'no manifest for this version', type: 'value_error' },
    ]);
  }
  if (saved.outcome === 'below') {
    // Document 2, Versioning: versions must not go backwards. The same target again is allowed (it re-arms the offers).
    throw new Validation(`invalid version: ${version} is below the current target ${saved.current}`, [
      { loc: ['body', 'version'], msg: 'below the current target', type: 'value_error' },
    ]);
  }
  targetVersionCache(deps.pool).remember(version);
  await clearOffers(deps.pool, version);
  const offered: string[] = [];
  // Only connected agents: an offer claimed for an agent that cannot hear it would be lost.
  const connected = await connectedNodes(deps.pool);
  for (const status of await agentStatuses(deps.pool, connected)) {
    if (await offerUpdate(deps, status.node_id, status.agent_version)) offered.push(status.node_id);
  }
  return { target: version, offered };
}

/**
 * Rings `agent_update_available` for the node when `agentVersion` is below the
 * global target, once per (node, target): the claim is a row shared by every
 * instance, so reconnects and other instances do not repeat it, and an agent
 * whose update failed (its health gate restored the old version) is not sent
 * into a loop. Only an offer handed to an open connection (here or, by
 * presence, on another instance) stays claimed. Returns whether it was delivered.
 */
export async function offerUpdate(deps: ReleaseDeps, nodeId: string, agentVersion: string | null): Promise<boolean> {
  const target = await targetVersion(deps.pool);
  if (!target || !needsUpdate(agentVersion, target)) return false;
  const manifest = await manifestOf(deps.pool, target);
  if (!manifest) return false;
  if (!(await claimOffer(deps.pool, nodeId, target, deps.now()))) return false;
  const deliveries = await deps.doorbell.ring([
    { type: 'agent_update_available', node_id: nodeId, version: target, wheels: manifest.wheels, reason: `target version ${target}` },
  ]);
  // Race: the agent may have gone (or its queue been full) since it was seen; an
  // offer nobody took is given back, so its next heartbeat is offered again.
  if (deliveries.every((d) => d.delivered === 0)) {
    await releaseOffer(deps.pool, nodeId, target);
    return false;
  }
  return true;
}

export interface ReleaseStatus {
  target: string | null;
  versions: string[];
  nodes: {
    node_id: string;
    agent_version: string | null;
    applied_generation: number | null;
    apply_status: string | null;
    last_seen: string | null;
    up_to_date: boolean;
    liveness: Liveness;
  }[];
}

/**
 * `GET /admin/agent-releases`: the target, uploaded versions (numeric order) and
 * every node of the fleet or of the liveness registry, by node id; a node that
 * never sent a heartbeat has nulls and is `offline`.
 */
export async function releaseStatus(deps: ReleaseDeps): Promise<ReleaseStatus> {
  const [target, versions, reported, fleet] = await Promise.all([
    targetVersion(deps.pool),
    releaseVersions(deps.pool),
    agentStatuses(deps.pool),
    listNodes(deps.pool),
  ]);
  const byNode = new Map(reported.map((s) => [s.node_id, s]));
  for (const n of fleet)
    if (!byNode.has(n.node_id))
      byNode.set(n.node_id, { node_id: n.node_id, agent_version: null, applied_generation: null, apply_status: null, last_seen: null });
  const statuses = [...byNode.values()].sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
  const now = deps.now();
  return {
    target,
    versions: versions.sort(compareVersions),
    nodes: statuses.map((s) => ({
      node_id: s.node_id,
      agent_version: s.agent_version,
      applied_generation: s.applied_generation,
      apply_status: s.apply_status,
      last_seen: s.last_seen ? s.last_seen.toISOString() : null,
      up_to_date: target !== null && s.agent_version === target,
      liveness: livenessOf(s.last_seen, now),
    })),
  };
}
