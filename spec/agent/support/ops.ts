import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { callControl } from '../../../agent/http.js';
import { LogRing } from '../../../agent/logs/ring.js';
import { DEFAULT_COMMANDS, type AgentCommands, type AgentRuntime, type AppliedState } from '../../../agent/runtime.js';
import { ADMIN_TOKEN, startControl, type ControlInstance } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { expectResponse } from '../../support/http.js';
import { node } from '../../http/control/fleet/support.js';

export { ADMIN_TOKEN };

/** A real control server with one node and an agent token for it. */
export interface OpsServer {
  control: ControlInstance;
  nodeId: string;
  token: string;
  close(): Promise<void>;
}

export async function startOpsServer(nodeId = 'fra1'): Promise<OpsServer> {
  const control = await startControl();
  expectResponse(await control.admin.post('/admin/nodes', node(nodeId))).status(201);
  const { token } = await issueAgentToken(control.url, ADMIN_TOKEN, nodeId);
  return { control, nodeId, token, close: () => control.close() };
}

export interface TestAgent {
  rt: AgentRuntime;
  ring: LogRing;
  stateDir: string;
  /** What `rt.applied()` answers; specs change it. */
  applied: AppliedState;
  cleanup(): Promise<void>;
}

/** An AgentRuntime as the CLI builds one (API base with `/control/v1`, pino into a LogRing), on a temporary state dir. */
export async function testAgent(server: OpsServer, options: { version?: string; commands?: Partial<AgentCommands> } = {}): Promise<TestAgent> {
  const stateDir = await mkdtemp(join(tmpdir(), 'dn42-agent-ops-'));
  const ring = new LogRing();
  const logger = pino({ name: 'dn42-agent', level: 'debug' }, ring);
  const applied: AppliedState = { generation: null, status: null, desired: null, failures: 0 };
  const base = `${server.control.url}/control/v1`;
  const rt: AgentRuntime = {
    controllerUrl: base,
    nodeId: server.nodeId,
    stateDir,
    renderedDir: join(stateDir, 'rendered'),
    version: options.version ?? '1.0.1',
    logger,
    commands: { ...DEFAULT_COMMANDS, ...options.commands },
    request: (method, path, body, headers) => callControl(base, method, path, body, server.token, headers),
    agentToken: () => server.token,
    applied: () => applied,
  };
  return { rt, ring, stateDir, applied, cleanup: () => rm(stateDir, { recursive: true, force: true }) };
}
