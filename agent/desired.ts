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

/**
 * `GET /agent/desired-state`: the published generation, validated; null when
 * the node has none yet (404). A refused token (401) is a `TokenRefused` (the
 * caller may renew it); any other status is an error with its detail.
 */
export async function pullDesired(rt: AgentRuntime): Promise<Desired | null> {
  const token = rt.agentToken();
  const answer = await rt.request<{ generation?: unknown; state?: unknown }>('GET', '/agent/desired-state');
  if (answer.status === 404) return null;
  if (answer.status === 401) throw new TokenRefused(token, detailOf(answer));
  if (answer.status !== 200) throw new Error(`desired state: ${detailOf(answer)}`);
  const generation = answer.body.generation;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation)) throw new Error('desired state: answer without a generation');
  return checkDesired(answer.body.state, generation);
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
