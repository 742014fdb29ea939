import { expect } from 'chai';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseCommandLine, type AgentSettings } from '../../../agent/cli.js';
import { Daemon, type DaemonServices } from '../../../agent/daemon.js';
import { LogRing } from '../../../agent/logs/ring.js';
import type { AgentRuntime } from '../../../agent/runtime.js';
import { openSession } from '../../../agent/session.js';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { uploadRelease } from '../../support/releases.js';
import { eventually } from '../../support/wait.js';
import { tempDir, writeAgentConfig } from '../support/core.js';

/** What the daemon handed to the services of agent-ops (recorded here; their own specs test what they do with it). */
interface Calls {
  telemetry: string[];
  stopped: number;
  probes: { rt: AgentRuntime; probeId: string; spec: any; signal?: AbortSignal }[];
  logs: { ring: LogRing; logId: string; spec: any; signal?: AbortSignal }[];
  updates: (object | undefined)[];
}

function recordingServices(calls: Calls): DaemonServices {
  return {
    startTelemetry: () => ({
      snapshotNow: async (reason) => void calls.telemetry.push(reason ?? ''),
      stop: async () => void calls.stopped++,
    }),
    runProbe: async (rt, probeId, spec, signal) => void calls.probes.push({ rt, probeId, spec, signal }),
    streamLogs: async (_rt, ring, logId, spec, signal) => void calls.logs.push({ ring, logId, spec, signal }),
    checkForUpdate: async (_rt, offer) => void calls.updates.push(offer),
  };
}

/** The daemon in this process (mode write-rendered: no BIRD needed) against a real control server; doorbells by real admin actions. */
describe('agent: daemon dispatch of doorbells', function () {
  this.timeout(60_000);
  let c: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const previousVersion = process.env.DN42_AGENT_VERSION;

  before(async () => {
    process.env.DN42_AGENT_VERSION = '1.0.100';
    dir = await tempDir();
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' })).status(201);
    expectResponse(
      await c.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_a', remote_asn: 4242420002, neighbor_address: '172.20.53.1' } }),
    ).status(201);
  });
  after(async () => {
    if (previousVersion === undefined) delete process.env.DN42_AGENT_VERSION;
    else process.env.DN42_AGENT_VERSION = previousVersion;
    await c.close();
    await dir.remove();
  });

  it('hands snapshot, probe, log and update doorbells to their services, heartbeats its version, and stops them on shutdown', async () => {
    const enrollment = await c.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' });
    const config = await writeAgentConfig(join(dir.path, 'agent.conf'), { mode: 'write-rendered' });
    const settings = parseCommandLine(
      [
        '--config',
        config,
        '--controller-url',
        c.url,
        '--enrollment-token',
        enrollment.body.secret,
        '--requested-node-id',
        'fra1',
        '--state-dir',
        join(dir.path, 'state'),
      ],
      '1.0.100',
    ) as AgentSettings;
    const ring = new LogRing();
    const log = pino({ name: 'dn42-agent', level: 'debug' }, ring);
    const session = await openSession(settings, log);
    const calls: Calls = { telemetry: [], stopped: 0, probes: [], logs: [], updates: [] };
    const daemon = new Daemon(session, ring, recordingServices(calls), { mode: 'write-rendered', reconcileIntervalMs: 300_000, heartbeatIntervalMs: 30_000 });
    const stop = new AbortController();
    const running = daemon.run(stop.signal);

    await eventually(() => c.sockets.hub.connectionCount('fra1') === 1, 10_000, 'the agent channel');
    expect(calls.updates).to.deep.equal([undefined]); // the start-up check without an offer
    await eventually(async () => (await c.admin.get('/admin/nodes/fra1/health')).body.agent_version === '1.0.100', 10_000, 'a heartbeat');

    expectResponse(await c.admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request' })).status(200);
    await eventually(() => calls.telemetry.includes('snapshot_request'), 5_000, 'snapshotNow');

    const probe = await c.admin.post('/ui/probes', { node_id: 'fra1', spec: { tool: 'ping', target: '172.20.53.1', count: 2 } });
    expectResponse(probe).status(202);
    await eventually(() => calls.probes.length === 1, 5_000, 'runProbe');
    expect(calls.probes[0]).to.deep.include({ probeId: probe.body.probe_id });
    expect(calls.probes[0].spec).to.deep.include({ tool: 'ping', target: '172.20.53.1', count: 2 });
    expect(calls.probes[0].rt.nodeId).to.equal('fra1');

    const view = await c.admin.post('/ui/logs', { node_id: 'fra1', spec: { mode: 'snapshot', source: 'buffer' } });
    expectResponse(view).status(202);
    await eventually(() => calls.logs.length === 1, 5_000, 'streamLogs');
    expect(calls.logs[0]).to.deep.include({ logId: view.body.log_id, ring });
    expect(calls.logs[0].spec).to.deep.include({ mode: 'snapshot', source: 'buffer' });

    const tgz = Buffer.from('release bytes');
    expectResponse(await uploadRelease(c.url, '1.0.900', [{ name: 'dn42_agent-1.0.900.tgz', content: tgz }])).status(201);
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.900' })).status(200);
    await eventually(() => calls.updates.length === 2, 5_000, 'checkForUpdate with the offer');
    expect(calls.updates[1]).to.deep.include({ version: '1.0.900' });
    expect((calls.updates[1] as { wheels: { filename: string }[] }).wheels.map((w) => w.filename)).to.deep.equal(['dn42_agent-1.0.900.tgz']);

    stop.abort();
    await running;
    expect(calls.stopped).to.equal(1);
    expect(calls.probes[0].signal?.aborted).to.equal(true);
    await eventually(() => c.sockets.hub.connectionCount('fra1') === 0, 5_000, 'the channel closed');
  });
});
