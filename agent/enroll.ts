import type { Logger } from 'pino';
import { Backoff, REGISTER_BACKOFF, sleep } from './backoff.js';
import { FatalError, RegistrationPending, Stopped } from './errors.js';
import { callControl, detailOf } from './http.js';
import type { Inventory } from './inventory.js';
import { readEnrollment, writeEnrollment, type Enrollment } from './state/enrollment.js';
import type { StateLayout } from './state/layout.js';

export interface EnrollOptions {
  apiBase: string;
  layout: StateLayout;
  enrollmentToken: string | null;
  requestedNodeId: string | null;
  inventory: Inventory;
  log: Logger;
  signal?: AbortSignal;
  backoff?: Backoff;
  /**
   * One registration attempt only (`--once`): a pending or failed attempt
   * throws (`RegistrationPending`, or an error naming the failure) instead of
   * retrying, so a one-shot run never waits for an administrator.
   */
  once?: boolean;
  /** Register again although an enrollment is stored (its token was refused); the new one replaces it. */
  renew?: boolean;
}

interface RegisterAnswer {
  status: 'accepted' | 'pending-approval';
  node_id: string;
  agent_id: string | null;
  agent_token: string | null;
  message: string;
}

/**
 * The stored enrollment, or a new one: `POST /agent/register` until the answer
 * is `accepted` (then token and node id are stored, 0600). `pending-approval`,
 * a rate limit, a server error or an unreachable server are retried with
 * backoff (with `once`: not retried, thrown); an enrollment token the server
 * refuses (401), a rejected node (403) or an invalid request (422) are fatal,
 * since asking again cannot change them.
 */
export async function enroll(options: EnrollOptions): Promise<Enrollment> {
  const stored = options.renew ? null : await readEnrollment(options.layout);
  if (stored && (options.requestedNodeId === null || options.requestedNodeId === stored.node_id)) return stored;
  if (stored) throw new FatalError(`state dir is enrolled as node ${stored.node_id}, not ${options.requestedNodeId}`);
  if (!options.enrollmentToken || !options.requestedNodeId)
    throw new FatalError('not enrolled: --enrollment-token and --requested-node-id are needed for the first run');
  const backoff = options.backoff ?? new Backoff(REGISTER_BACKOFF);
  const body = { enrollment_token: options.enrollmentToken, requested_node_id: options.requestedNodeId, inventory: options.inventory };
  for (;;) {
    const answer = await register(options, body);
    if (typeof answer !== 'string' && answer.status === 'accepted' && answer.agent_token) {
      const enrollment = { node_id: answer.node_id, agent_id: answer.agent_id, token: answer.agent_token };
      await writeEnrollment(options.layout, enrollment);
      options.log.info({ node_id: enrollment.node_id, agent_id: enrollment.agent_id }, 'enrolled');
      return enrollment;
    }
    if (options.once) throw typeof answer === 'string' ? new Error(answer) : new RegistrationPending(answer.message);
    const delay = backoff.next();
    if (typeof answer !== 'string') options.log.info({ node_id: options.requestedNodeId, retry_in_ms: delay }, `registration pending: ${answer.message}`);
    if (!(await sleep(delay, options.signal))) throw new Stopped();
  }
}

/** One registration attempt: the answer, or the reason of a failure worth retrying (logged). */
async function register(options: EnrollOptions, body: object): Promise<RegisterAnswer | string> {
  try {
    const answer = await callControl<RegisterAnswer>(options.apiBase, 'POST', '/agent/register', body);
    if (answer.status === 200) return answer.body;
    if (answer.status === 401 || answer.status === 403 || answer.status === 422) throw new FatalError(`registration refused: ${detailOf(answer)}`);
    options.log.warn({ status: answer.status }, `registration failed: ${detailOf(answer)}`);
    return `registration failed: ${detailOf(answer)}`;
  } catch (err) {
    if (err instanceof FatalError) throw err;
    options.log.warn({ err }, 'control server unreachable for registration');
    return `registration failed: control server unreachable: ${String((err as Error).cause ?? (err as Error).message)}`;
  }
}
