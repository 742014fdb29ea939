import express from 'express';
import { requireAgent, type AgentPrincipal } from '../../../../http/control/agent/auth.js';
import { createControlApp } from '../../../../http/control/app.js';
import { errorHandler } from '../../../../http/shared/errors.js';
import { api } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';

export const ADMIN_TOKEN = 'agent-spec-admin-token-0123456789';

export interface AgentHarness {
  sys: TestSystem;
  /** Server origin (no prefix), for `issueAgentToken`. */
  url: string;
  /** Admin client on `/control/v1`. */
  admin: ReturnType<typeof api>;
  /** Anonymous client on `/control/v1`. */
  anon: ReturnType<typeof api>;
  /** A second server whose `GET /whoami` sits behind `requireAgent` and echoes `res.locals.agent`. */
  whoami(token?: string, header?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A control server on a fresh database plus a probe app guarded by `requireAgent` on the same context. */
export async function startAgentHarness(env: Record<string, string> = {}): Promise<AgentHarness> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN, ...env } });
  const control = await startApp(createControlApp(sys.context));
  const probe = express();
  probe.get('/whoami', requireAgent(sys.context), (_req, res) => {
    res.json({ agent: res.locals.agent as AgentPrincipal });
  });
  probe.use(errorHandler('control', sys.log));
  const guarded = await startApp(probe);
  return {
    sys,
    url: control.url,
    admin: api(`${control.url}/control/v1`, { token: ADMIN_TOKEN }),
    anon: api(`${control.url}/control/v1`),
    async whoami(token, header) {
      const headers: Record<string, string> = {};
      if (header !== undefined) headers.authorization = header;
      else if (token !== undefined) headers.authorization = `Bearer ${token}`;
      const res = await fetch(`${guarded.url}/whoami`, { headers });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await guarded.close();
      await control.close();
      await sys.close();
    },
  };
}

export const nodeBody = (node_id: string) => ({ node_id, asn: 4242420001, router_id: '172.20.0.1', site: 'fra', link_local: 'fe80::1' });
