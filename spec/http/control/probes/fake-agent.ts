/**
 * A stand-in node agent, run as its own process by the probe specs:
 *   node --import tsx fake-agent.ts <control origin> <node id>   (AGENT_TOKEN in the environment)
 * It holds `WS /agent/ws/{node}`, prints `ready` after the hello, and answers
 * every `probe_request` / `log_request` on the job's temporary channel the way
 * FAKE_AGENT_MODE says:
 *   answer  (default) two `output` lines (or one log batch) and `done`
 *   hangup  one `output` line (or one log batch), then closes without `done`
 * Each message it sends names a forged job id, which the server must overwrite.
 */
import { WebSocket } from 'ws';

const [origin, nodeId] = process.argv.slice(2);
const token = process.env.AGENT_TOKEN;
const mode = process.env.FAKE_AGENT_MODE ?? 'answer';
if (!origin || !nodeId || !token) {
  console.error('usage: fake-agent.ts <origin> <node id> (AGENT_TOKEN set)');
  process.exit(2);
}
const base = `${origin.replace(/^http/, 'ws')}/control/v1/agent`;
const headers = { authorization: `Bearer ${token}` };

const channel = new WebSocket(`${base}/ws/${encodeURIComponent(nodeId)}`, { headers });
channel.on('message', (raw) => {
  const event = JSON.parse(raw.toString()) as { type: string; probe_id?: string; log_id?: string; spec?: Record<string, unknown> };
  if (event.type === 'hello') console.log('ready');
  if (event.type === 'probe_request') runProbe(event.probe_id!, event.spec!);
  if (event.type === 'log_request') runLog(event.log_id!, event.spec!);
});
channel.on('close', (code) => {
  console.log(`closed ${code}`);
  process.exit(0);
});
channel.on('error', (err) => console.error(`channel error ${err.message}`));

function open(path: string, frames: object[], then: 'done' | 'hangup', done: object): void {
  const ws = new WebSocket(`${base}/${path}`, { headers });
  ws.on('open', () => {
    for (const frame of frames) ws.send(JSON.stringify(frame));
    if (then === 'done') ws.send(JSON.stringify(done));
    else setTimeout(() => ws.terminate(), 50); // hangs up a moment after its frames, as a crashing agent would
  });
  ws.on('close', (code) => console.log(`${path} closed ${code}`));
  ws.on('error', (err) => console.error(`${path} error ${err.message}`));
}

function runProbe(id: string, spec: Record<string, unknown>): void {
  const forged = 'forged-probe-id';
  open(
    `probe-stream/${id}`,
    mode === 'hangup'
      ? [{ type: 'output', probe_id: forged, text: `PING ${spec.target}` }]
      : [
          { type: 'output', probe_id: forged, text: `PING ${spec.target} count ${spec.count}` },
          { type: 'output', probe_id: forged, text: `64 bytes from ${spec.target}: icmp_seq=1 ttl=64 time=0.042 ms` },
        ],
    mode === 'hangup' ? 'hangup' : 'done',
    { type: 'done', probe_id: forged, exit_code: 0 },
  );
}

function runLog(id: string, spec: Record<string, unknown>): void {
  const forged = 'forged-log-id';
  const entries = [
    { ts: '2026-11-01T12:00:00Z', level: 'INFO', logger: 'agent.reconcile', message: 'applied generation 3' },
    { ts: '2026-11-01T12:00:01Z', level: 'WARNING', logger: 'agent.bird', message: `session down (lines ${spec.lines})` },
  ];
  open(`log-stream/${id}`, [{ type: 'log', log_id: forged, seq: 0, entries }], mode === 'hangup' ? 'hangup' : 'done', { type: 'done', log_id: forged });
}
