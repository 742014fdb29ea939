import type { Logger } from 'pino';
import { enroll } from './enroll.js';
import { FatalError, RegistrationPending } from './errors.js';
import type { Inventory } from './inventory.js';
import { readEnrollment } from './state/enrollment.js';
import type { StateLayout } from './state/layout.js';

export interface TokenKeeperOptions {
  apiBase: string;
  layout: StateLayout;
  nodeId: string;
  /** The configured enrollment token (`--enrollment-token`, `enrollment_token`); null: none. */
  enrollmentToken: string | null;
  inventory: Inventory;
  log: Logger;
}

/**
 * The agent token in use, and what the agent does when the server refuses it
 * (401 on a pull, close code 4401 on the socket: revoked, rotated, expired):
 * 1. a token in `<state>/agent-token` other than the refused one is taken
 *    (an operator wrote the rotated secret there: no restart needed);
 * 2. else, with an enrollment token configured, one `POST /agent/register`
 *    for this node (the global bootstrap token, or a fresh one-time token the
 *    operator put into the configuration); accepted: the new token is stored;
 * 3. else the refusal is logged as an error on every attempt, the agent keeps
 *    retrying with its backoff (nothing else can work without a token).
 * Concurrent refusals (the socket and a pull) share one renewal.
 */
export class TokenKeeper {
  private renewing: Promise<boolean> | null = null;

  constructor(
    private current: string,
    private readonly o: TokenKeeperOptions,
  ) {}

  token(): string {
    return this.current;
  }

  /** After the server refused `refused`: true when a different token is in use now. */
  renew(refused: string, where: string): Promise<boolean> {
    if (this.current !== refused) return Promise.resolve(true);
    this.renewing ??= this.tryRenew(where).finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async tryRenew(where: string): Promise<boolean> {
    const { log } = this.o;
    const stored = await readEnrollment(this.o.layout).catch(() => null);
    if (stored && stored.node_id === this.o.nodeId && stored.token !== this.current) {
      this.current = stored.token;
      log.warn({ where }, 'agent token refused; using the new token found in the state dir');
      return true;
    }
    if (!this.o.enrollmentToken) {
      log.error(
        { where },
        'agent token refused (revoked, rotated or expired) and no enrollment token configured: write the new token into the state dir (agent-token) or configure an enrollment token',
      );
      return false;
    }
    try {
      const enrollment = await enroll({ ...this.o, requestedNodeId: this.o.nodeId, once: true, renew: true });
      this.current = enrollment.token;
      log.warn({ where, agent_id: enrollment.agent_id }, 'agent token refused; re-enrolled with the configured enrollment token');
      return true;
    } catch (err) {
      const why = err instanceof FatalError || err instanceof RegistrationPending ? err.message : `${(err as Error).message}`;
      log.error({ where }, `agent token refused and re-enrolment failed: ${why}`);
      return false;
    }
  }
}
