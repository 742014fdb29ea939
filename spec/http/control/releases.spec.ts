import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { UPLOAD_LIMITS } from '../../../domain/release/rules.js';
import { recordHeartbeat } from '../../../infra/telemetry/liveness.js';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { node } from './fleet/support.js';
import { uploadRelease } from '../../support/releases.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('agent releases (admin)', () => {
  let c: ControlInstance;
  const agentTgz = Buffer.from('agent tarball 1.0.200');
  const wheel = Buffer.from('a python wheel, 1.0.200');

  before(async () => {
    c = await startControl();
  });
  after(() => c.close());

  it('stores an upload and answers its manifest (201), files by name with sha256 and size', async () => {
    const res = await uploadRelease(c.url, '1.0.200', [
      { name: 'dn42_agent-1.0.200.tgz', content: agentTgz },
      { name: 'dn42_common-1.0.200-py3-none-any.whl', content: wheel },
    ]);
    expectResponse(res).status(201);
    expect(res.body).to.deep.equal({
      version: '1.0.200',
      wheels: [
        { filename: 'dn42_agent-1.0.200.tgz', sha256: sha256(agentTgz), size: agentTgz.length },
        { filename: 'dn42_common-1.0.200-py3-none-any.whl', sha256: sha256(wheel), size: wheel.length },
      ],
    });
    expect((await c.admin.get('/admin/agent-releases')).body).to.deep.include({ target: null, versions: ['1.0.200'] });
  });

  it('replaces every file of a version uploaded again and does not roll it out', async () => {
    await uploadRelease(c.url, '1.0.9', [{ name: 'old.tgz', content: Buffer.from('old') }]);
    const res = await uploadRelease(c.url, '1.0.9', [{ name: 'new.tgz', content: Buffer.from('new!') }]);
    expectResponse(res).status(201);
    expect(res.body.wheels).to.deep.equal([{ filename: 'new.tgz', sha256: sha256(Buffer.from('new!')), size: 4 }]);
    const { rows } = await c.sys.pool.query(`SELECT filename FROM agent_release_files WHERE version = '1.0.9'`);
    expect(rows).to.deep.equal([{ filename: 'new.tgz' }]);
    // Numeric order, not text order; still no target.
    expect((await c.admin.get('/admin/agent-releases')).body).to.deep.include({ target: null, versions: ['1.0.9', '1.0.200'] });
  });

  for (const version of ['1.0', '1.0.0-beta', 'v1.0.0', '../1.0.0', '1.0.0/..', '01.0.0', ' 1.0.0', '1.0.0\n']) {
    it(`refuses version ${JSON.stringify(version)} (422)`, async () => {
      expectResponse(await uploadRelease(c.url, version, [{ name: 'a.tgz', content: Buffer.from('x') }]))
        .status(422)
        .detail(/^invalid version/);
    });
  }

  for (const name of [
    '../evil.whl',
    '..%2Fevil.whl',
    'dir/evil.whl',
    'dir\\evil.whl',
    '.hidden.whl',
    'a..b.whl',
    'evil.zip',
    'evil.whl.sh',
    'evil',
    'ev il.tgz',
    '-rf.tgz',
    'é.whl',
  ]) {
    it(`refuses file name ${JSON.stringify(name)} (422) and stores nothing`, async () => {
      const res = await uploadRelease(c.url, '2.0.0', [
        { name: 'fine.tgz', content: Buffer.from('ok') },
        { name, content: Buffer.from('x') },
      ]);
      expectResponse(res)
        .status(422)
        .detail(/^invalid file name/);
      expect((await c.sys.pool.query(`SELECT 1 FROM agent_releases WHERE version = '2.0.0'`)).rowCount).to.equal(0);
    });
  }

  it('refuses an upload without version, without files, with a duplicate name or another file field (422)', async () => {
    expectResponse(await uploadRelease(c.url, undefined, [{ name: 'a.tgz', content: Buffer.from('x') }]))
      .status(422)
      .detail(/^invalid version/);
    expectResponse(await uploadRelease(c.url, '3.0.0', []))
      .status(422)
      .detail(/^invalid files/);
    expectResponse(
      await uploadRelease(c.url, '3.0.0', [
        { name: 'a.tgz', content: Buffer.from('x') },
        { name: 'a.tgz', content: Buffer.from('y') },
      ]),
    )
      .status(422)
      .detail(/^invalid files/);
    expectResponse(await uploadRelease(c.url, '3.0.0', [{ name: 'a.tgz', content: Buffer.from('x'), field: 'wheel' }]))
      .status(422)
      .detail(/^invalid upload/);
    expectResponse(await c.admin.post('/admin/agent-releases', { version: '3.0.0' }))
      .status(422)
      .detail(/^invalid upload/);
  });

  it(`refuses more than ${UPLOAD_LIMITS.files} files (413)`, async () => {
    const files = Array.from({ length: UPLOAD_LIMITS.files + 1 }, (_, i) => ({ name: `f${i}.tgz`, content: Buffer.from('x') }));
    expectResponse(await uploadRelease(c.url, '4.0.0', files)).status(413);
  });

  it(`refuses a file above ${UPLOAD_LIMITS.file_bytes} bytes (413)`, async () => {
    expectResponse(await uploadRelease(c.url, '4.0.0', [{ name: 'big.tgz', content: Buffer.alloc(UPLOAD_LIMITS.file_bytes + 1) }])).status(413);
    expect((await c.sys.pool.query(`SELECT 1 FROM agent_releases WHERE version = '4.0.0'`)).rowCount).to.equal(0);
  });

  it('sets the target only to an uploaded version (422 otherwise)', async () => {
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '9.9.9' }))
      .status(422)
      .detail('invalid version: 9.9.9 has not been uploaded');
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: 'latest' }))
      .status(422)
      .detail(/^invalid version/);
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: `1.0.${'9'.repeat(40)}` }))
      .status(422)
      .detail(/^invalid version: "1\.0\.9+/);
    expectResponse(await c.admin.post('/admin/agent-releases/target', {})).status(422);
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.200' }))
      .status(200)
      .body({ target: '1.0.200' });
    expect((await c.admin.get('/admin/agent-releases')).body.target).to.equal('1.0.200');
  });

  it('refuses a target below the current one (versions must not go backwards); the same one again re-arms', async () => {
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.9' }))
      .status(422)
      .detail('invalid version: 1.0.9 is below the current target 1.0.200');
    expect((await c.admin.get('/admin/agent-releases')).body.target).to.equal('1.0.200');
    expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.200' }))
      .status(200)
      .body({ target: '1.0.200' });
  });

  it('reports every node with its agent version, up_to_date and liveness', async () => {
    await c.admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2' }));
    await c.admin.post('/admin/nodes', node('fra1'));
    await c.admin.post('/admin/nodes', node('lon1', { router_id: '172.20.0.3' }));
    const now = c.sys.clock.now();
    await recordHeartbeat(c.sys.pool, 'fra1', { agent_version: '1.0.200', applied_generation: 3, apply_status: 'ok' }, now);
    await recordHeartbeat(c.sys.pool, 'ams1', { agent_version: '1.0.190', applied_generation: 1, apply_status: 'failed' }, new Date(now.getTime() - 100_000));
    const status = (await c.admin.get('/admin/agent-releases')).body;
    expect(status.nodes).to.deep.equal([
      {
        node_id: 'ams1',
        agent_version: '1.0.190',
        applied_generation: 1,
        apply_status: 'failed',
        last_seen: new Date(now.getTime() - 100_000).toISOString(),
        up_to_date: false,
        liveness: 'stale',
      },
      {
        node_id: 'fra1',
        agent_version: '1.0.200',
        applied_generation: 3,
        apply_status: 'ok',
        last_seen: now.toISOString(),
        up_to_date: true,
        liveness: 'online',
      },
      { node_id: 'lon1', agent_version: null, applied_generation: null, apply_status: null, last_seen: null, up_to_date: false, liveness: 'offline' },
    ]);
  });

  it('needs the admin credential and audits uploads', async () => {
    const res = await fetch(`${c.url}/control/v1/admin/agent-releases`, { method: 'POST', body: new FormData() });
    expect(res.status).to.equal(401);
    expectResponse(await c.admin.get('/admin/agent-releases', { token: 'wrong' })).status(401);
    await c.sys.context.background.drain();
    const log = (await c.admin.get('/admin/audit-log?limit=1000')).body.entries as { path: string; status_code: number }[];
    expect(log.some((e) => e.path === '/control/v1/admin/agent-releases' && e.status_code === 201)).to.equal(true);
  });
});
