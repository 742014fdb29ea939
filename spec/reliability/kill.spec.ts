import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventually } from '../support/wait.js';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { api } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { tableRows } from '../support/tables.js';
import { node } from '../http/control/fleet/support.js';
import { runCli, serveControl } from './support/server.js';

const ADMIN_TOKEN = 'kill-spec-admin-token-0123456789';
const WORKERS = 6;
/** Read models compared with their rebuild (rows as JSON, in a stable order). */
const READ_MODELS = ['nodes', 'peerings', 'generations', 'node_history', 'audit_log'];

interface Acked {
  method: string;
  path: string;
  status: number;
  node: string;
  /** For a PATCH: the label value it set. */
  seq?: number;
}

describe('kill -9 of the control server during concurrent admin writes', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let port: number;

  before(async () => {
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'dn42-kill-'));
    port = await freePort();
    env = { DATABASE_URL: db.url, DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'warn' };
  });

  after(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write with its audit entry, and its read models equal their rebuild', async () => {
    const server = await serveControl(port, env);
    const admin = api(`http://127.0.0.1:${port}/control/v1`, { token: ADMIN_TOKEN });
    const acked: Acked[] = [];
    let stop = false;
    // Each worker creates its own nodes, PATCHes them and adds peerings: writes race on the shared streams, never on one node.
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `k${w}n${i}`;
        const steps: [string, string, unknown, number | undefined][] = [
          ['POST', '/admin/nodes', node(id), undefined],
          ['PATCH', `/admin/nodes/${id}`, { labels: { seq: '1' } }, 1],
          ['POST', `/admin/nodes/${id}/peerings`, { name: `p${w}x${i}`, remote_asn: 4242420100 + w }, undefined],
          ['PATCH', `/admin/nodes/${id}`, { labels: { seq: '2' } }, 2],
        ];
        for (const [method, path, body, seq] of steps) {
          if (stop) return;
          const res = await admin.send(method, path, { body }).catch(() => undefined);
          if (!res) return; // the server died under this request: not acknowledged
          expect(res.status, `${method} ${path}: ${res.text}`).to.be.below(300);
          acked.push({ method, path: `/control/v1${path}`, status: res.status, node: id, seq });
        }
      }
    };
    const running = Array.from({ length: WORKERS }, (_, w) => worker(w));
    // Kill once the writes are well under way (a count, not a time: the same point under load).
    await eventually(() => acked.length >= 80, { timeoutMs: 150_000, what: '80 acknowledged writes' });
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(running);
    expect((await server.closed).signal).to.equal('SIGKILL');
    expect(acked.length).to.be.at.least(80);

    const again = await serveControl(port, env);
    try {
      // Every acknowledged create and PATCH is there (a later unacknowledged PATCH may have landed too).
      const lastSeq = new Map<string, number>();
      for (const a of acked) if (a.seq) lastSeq.set(a.node, a.seq);
      for (const id of new Set(acked.filter((a) => a.method === 'POST' && a.path === '/control/v1/admin/nodes').map((a) => a.node))) {
        const res = await admin.get(`/admin/nodes/${id}`);
        expect(res.status, id).to.equal(200);
        if (lastSeq.has(id)) expect(Number(res.body.labels?.seq ?? 0), `labels of ${id}`).to.be.at.least(lastSeq.get(id)!);
      }
      for (const a of acked.filter((x) => x.path.endsWith('/peerings'))) {
        const res = await admin.get(`/admin/nodes/${a.node}/peerings`);
        expect(JSON.stringify(res.body), `peering of ${a.node}`).to.include(`"p${a.node.slice(1).replace('n', 'x')}"`);
      }
      // Every acknowledged write has its audit entry: as many entries per method and path as acknowledged answers.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ method: string; path: string; status_code: number }>(
          `SELECT method, path, status_code FROM audit_log WHERE status_code < 300`,
        );
        const audited = new Map<string, number>();
        for (const r of rows) audited.set(`${r.method} ${r.path} ${r.status_code}`, (audited.get(`${r.method} ${r.path} ${r.status_code}`) ?? 0) + 1);
        const wanted = new Map<string, number>();
        for (const a of acked) wanted.set(`${a.method} ${a.path} ${a.status}`, (wanted.get(`${a.method} ${a.path} ${a.status}`) ?? 0) + 1);
        const missing = [...wanted].filter(([k, n]) => (audited.get(k) ?? 0) < n).map(([k]) => k);
        expect(missing, 'acknowledged writes without an audit entry').to.deep.equal([]);

        // Nothing half-written: the read models equal a rebuild from the events.
        again.child.kill('SIGTERM');
        await again.closed;
        const before = [];
        for (const t of READ_MODELS) before.push(await tableRows(client, t, 'to_jsonb(t)::text'));
        const rebuild = runCli(['projections', 'rebuild'], { DATABASE_URL: db.url, DATA_DIR: dataDir });
        expect((await rebuild.closed).code, rebuild.output()).to.equal(0);
        const after = [];
        for (const t of READ_MODELS) after.push(await tableRows(client, t, 'to_jsonb(t)::text'));
        for (const [i, t] of READ_MODELS.entries()) expect(after[i], `${t} after a rebuild`).to.deep.equal(before[i]);
        console.log(`      kill -9: ${acked.length} acknowledged writes survived with their audit entries; ${READ_MODELS.join(', ')} equal their rebuild`);
      } finally {
        await client.end();
      }
    } finally {
      if (again.child.exitCode === null && again.child.signalCode === null) again.child.kill('SIGTERM');
      await again.closed;
    }
  });
});
