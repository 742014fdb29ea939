import { readFile } from 'node:fs/promises';
import { validateDesiredState, type DesiredState } from '../domain/desired-state/schema.js';
import { TokenRefused } from './errors.js';
import { detailOf } from './http.js';
import type { AgentRuntime } from './runtime.js';

/** A desired state to reconcile to, with its generation (null for an offline document without one). */
export interface Desired {
  generation: number | null;
  state: DesiredState;
}

/** The document failed the shared schema: a too-new or broken state is refused whole, never applied in part. */
export class InvalidDesiredState extends Error {
  override name = 'InvalidDesiredState';
  constructor(
    readonly generation: number | null,
    readonly errors: { loc: (string | number)[]; msg: string }[],
  ) {
    const where = generation === null ? 'desired state' : `desired state generation ${generation}`;
    super(
      `${where} failed validation: ${errors
        .slice(0, 5)
        .map((e) => `${e.loc.join('.')}: ${e.msg}`)
        .join('; ')}`,
    );
  }
}

/** Validates strictly (unknown fields fail, defaults filled) and returns the typed document. */
export function checkDesired(doc: unknown, generation: number | null): Desired {
  const checked = validateDesiredState(doc);
  if (!checked.ok) throw new InvalidDesiredState(generation, checked.errors);
  return { generation, state: doc as DesiredState };
}

/** The document last pulled, with the server's tag for it (sent back in `If-None-Match`). */
export interface HeldDesired {
  etag: string;
  desired: Desired;
}

/**
 * `GET /agent/desired-state`: the published generation, validated; null when
 * the node has none yet (404). With `held`, its tag goes out in
 * `If-None-Match` and a 304 means "unchanged": the held document is returned
 * as it is (validated when it was pulled). A refused token (401) is a
 * `TokenRefused` (the caller may renew it); any other status is an error with
 * its detail. Resolves with the document and what to hold for the next pull.
 */
export async function pullDesired(rt: AgentRuntime, held: HeldDesired | null = null): Promise<{ desired: Desired | null; held: HeldDesired | null }> {
  const token = rt.agentToken();
  const answer = await rt.request<{ generation?: unknown; state?: unknown }>(
    'GET',
    '/agent/desired-state',
    undefined,
    held ? { 'if-none-match': held.etag } : {},
  );
  if (answer.status === 304 && held) return { desired: held.desired, held };
  if (answer.status === 404) return { desired: null, held: null };
  if (answer.status === 401) throw new TokenRefused(token, detailOf(answer));
  if (answer.status !== 200) throw new Error(`desired state: ${detailOf(answer)}`);
  const generation = answer.body.generation;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation)) throw new Error('desired state: answer without a generation');
  const desired = checkDesired(answer.body.state, generation);
  return { desired, held: answer.etag ? { etag: answer.etag, desired } : null };
}

/**
 * The desired-state source of a connected agent: pulls conditionally, holding
 * the last document in memory (a restarted agent pulls it whole once). An
 * invalid document is not held: the next pull fetches it again.
 */
export function desiredSource(rt: AgentRuntime): () => Promise<Desired | null> {
  let held: HeldDesired | null = null;
  return async () => {
    const pulled = await pullDesired(rt, held);
    held = pulled.held;
    return pulled.desired;
  };
}

/**
 * An offline document: either the bare desired state or the answer of
 * `GET /agent/desired-state` (`{generation, state, ...}`), whose generation is kept.
 */
export async function readDesiredFile(path: string): Promise<Desired> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read desired state ${path}: ${(err as Error).message}`, { cause: err });
  }
  const envelope = doc as { generation?: unknown; state?: unknown; node?: unknown };
  if (typeof envelope === 'object' && envelope !== null && envelope.state !== undefined && envelope.node === undefined) {
    return checkDesired(envelope.state, typeof envelope.generation === 'number' ? envelope.generation : null);
  }
  return checkDesired(doc, null);
}
