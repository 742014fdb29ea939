import type { Logger } from 'pino';
import type { AgentSettings } from './cli.js';
import { RegistrationPending, Stopped, TokenRefused } from './errors.js';
import { isDeployFailure, type ReconcileSummary } from './reconcile.js';
import { ensureKeyRegistered, openSession, type AgentSession } from './session.js';

/**
 * `--once` and `--plan-only`: one reconcile, the JSON summary on stdout, exit
 * 1 on a deploy failure (including one before the apply: no enrollment, a
 * registration still pending approval, an invalid document, a render error)
 * and 0 otherwise. Every request is made once: nothing waits for an administrator.
 */
export async function runOnce(settings: AgentSettings, log: Logger, signal: AbortSignal, print: (text: string) => void): Promise<number> {
  let summary: ReconcileSummary;
  try {
    const session = await openSession(settings, log, signal);
    summary = await reconcileWithToken(session, settings);
  } catch (err) {
    if (err instanceof Stopped) return 0;
    const pending = err instanceof RegistrationPending;
    if (pending) log.warn(`registration pending: ${(err as Error).message}`);
    else log.error({ err }, 'reconcile failed');
    summary = {
      node_id: settings.requestedNodeId ?? '',
      mode: settings.mode,
      generation: null,
      status: pending ? 'pending_approval' : 'failed',
      rendered_dir: settings.renderedDir ?? '',
      changes: null,
      drift: [],
      steps: [],
      error: (err as Error).message,
    };
  }
  print(`${JSON.stringify(summary, null, 2)}\n`);
  return isDeployFailure(summary) ? 1 : 0;
}

/** The reconcile; when the token is refused and could be renewed (`TokenKeeper`), once more with the new one. */
async function reconcileWithToken(session: AgentSession, settings: AgentSettings): Promise<ReconcileSummary> {
  const attempt = async () => {
    if (settings.mode !== 'plan-only') await ensureKeyRegistered(session);
    return session.reconciler.reconcile(settings.mode, true);
  };
  try {
    return await attempt();
  } catch (err) {
    if (!(err instanceof TokenRefused) || !(await session.renewToken(err.token, 'pull'))) throw err;
    return attempt();
  }
}
