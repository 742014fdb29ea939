import { expect } from 'chai';
import { renameSync } from 'node:fs';
import { createRegistryApp } from '../../../http/registry/app.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { api, expectResponse } from '../../support/http.js';
import {
  ALPHA_FPR,
  ALPHA_KEY,
  ALPHA_SK_KEY,
  BETA_FPR,
  BETA_RSA_KEY,
  KEYCERT_FPR,
  RegistryRepo,
  registryEnv,
  spaced,
  writeBaseRegistry,
} from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const TOKEN = 'registry-service-token-for-specs';

describe('Registry replica API', function () {
  this.timeout(30_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let commit: string;
  const closers: (() => Promise<void>)[] = [];

  async function serve(app: Parameters<typeof startApp>[0], token?: string) {
    const started = await startApp(app);
    closers.push(started.close);
    return api(started.url, { token });
  }

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    commit = repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    client = await serve(createRegistryApp(sys.context), TOKEN);
  });
  after(async () => {
    for (const close of closers) await close();
    await sys?.close();
    repo?.destroy();
  });

  describe('service token', () => {
    it('answers 403 everywhere but /healthz when no token is configured', async () => {
      const config = loadConfig({ DATABASE_URL: sys.db.url, LOG_LEVEL: 'silent' });
      const open = await serve(createRegistryApp({ ...sys.context, config }), TOKEN);
      for (const path of ['/registry/v1/status', '/registry/v1/asns/4242420001', '/registry/v1/nope']) {
        expectResponse(await open.get(path))
          .status(403)
          .detail('registry replica access is disabled: no service token configured');
      }
      expectResponse(await open.post('/registry/v1/names', { asns: [1] })).status(403);
      expectResponse(await open.get('/healthz')).status(200);
    });

    it('answers 401 without a bearer or with a wrong one', async () => {
      expectResponse(await client.get('/registry/v1/status', { token: 'wrong-token-of-some-length' }))
        .status(401)
        .detail('invalid service token');
      const bare = await serve(createRegistryApp(sys.context));
      expectResponse(await bare.get('/registry/v1/status'))
        .status(401)
        .detail('missing bearer token');
      expectResponse(await bare.get('/healthz')).status(200);
    });
  });

  describe('before the first sync', () => {
    it('reports no commit', async () => {
      expectResponse(await client.get('/registry/v1/status'))
        .status(200)
        .body({ enabled: true, commit: null, asn_count: 0, synced_at: null, counts: {} });
    });
  });

  describe('sync', () => {
    it('loads the commit, then answers synced=false, then reloads when forced', async () => {
      expectResponse(await client.post('/registry/v1/sync'))
        .status(200)
        .body({ synced: true, commit, previous_commit: null });
      expectResponse(await client.post('/registry/v1/sync'))
        .status(200)
        .body({ synced: false, commit });
      expectResponse(await client.post('/registry/v1/sync?force=1'))
        .status(200)
        .body({ synced: true, commit, previous_commit: commit });
      const status = await client.get('/registry/v1/status');
      expectResponse(status).status(200).body({ enabled: true, commit, asn_count: 3 });
      expect(status.body.counts).to.include({ 'aut-num': 3, mntner: 2, malformed: 1 });
      expect(Date.parse(status.body.synced_at)).to.be.a('number').and.not.NaN;
    });

    it('answers 422 for an unknown force value', async () => {
      expectResponse(await client.post('/registry/v1/sync?force=maybe')).status(422);
    });

    it('answers 409 when the https upstream needs a token that is not configured', async () => {
      const config = loadConfig({
        DATABASE_URL: sys.db.url,
        LOG_LEVEL: 'silent',
        REGISTRY_SERVICE_TOKEN: TOKEN,
        REGISTRY_SOURCE: 'https://git.example.invalid/registry.git',
      });
      const other = await serve(createRegistryApp({ ...sys.context, config }), TOKEN);
      expectResponse(await other.post('/registry/v1/sync'))
        .status(409)
        .detail('the registry upstream needs a token: REGISTRY_UPSTREAM_TOKEN is not configured');
    });

    it('answers 502 when the upstream fails and keeps serving the loaded commit', async () => {
      const moved = `${repo.dir}-gone`;
      renameSync(repo.dir, moved);
      try {
        expectResponse(await client.post('/registry/v1/sync?force=1'))
          .status(502)
          .detail('registry upstream failed; the replica keeps its data');
      } finally {
        renameSync(moved, repo.dir);
      }
      expectResponse(await client.get('/registry/v1/status'))
        .status(200)
        .body({ commit });
      expectResponse(await client.get('/registry/v1/asns/4242420001'))
        .status(200)
        .body({ as_name: 'ALPHA-AS' });
    });
  });

  describe('names', () => {
    it('returns as-names, leaving out unknown and nameless ASNs', async () => {
      expectResponse(await client.post('/registry/v1/names', { asns: [4242420002, 4242420001, 4242420003, 64512] }))
        .status(200)
        .body({ names: { 4242420001: 'ALPHA-AS', 4242420002: 'BETA-AS' } });
    });

    it('takes 1000 ASNs and refuses 1001 with 422, never truncating', async () => {
      const many = Array.from({ length: 1000 }, (_, i) => 4242420000 + i);
      const res = await client.post('/registry/v1/names', { asns: many });
      expectResponse(res).status(200);
      expect(res.body.names).to.deep.equal({ 4242420001: 'ALPHA-AS', 4242420002: 'BETA-AS' });
      expectResponse(await client.post('/registry/v1/names', { asns: [...many, 1] })).status(422);
    });

    it('refuses values that are not ASNs', async () => {
      expectResponse(await client.post('/registry/v1/names', { asns: ['AS1'] })).status(422);
      expectResponse(await client.post('/registry/v1/names', { asns: [-1] })).status(422);
      expectResponse(await client.post('/registry/v1/names', { asns: [4294967296] })).status(422);
      expectResponse(await client.post('/registry/v1/names', {})).status(422);
    });
  });

  describe('asns', () => {
    it('returns the ASN record with every maintainer', async () => {
      const res = await client.get('/registry/v1/asns/4242420001');
      expectResponse(res)
        .status(200)
        .body({
          asn: 4242420001,
          as_name: 'ALPHA-AS',
          descr: 'Alpha network\nspread over two lines\n',
          mnt_by: ['ALPHA-MNT', 'BETA-MNT'],
          admin_c: ['ALPHA-DN42'],
          tech_c: ['ALPHA-DN42', 'OPS-DN42'],
        });
      expect(res.body.updated_at).to.be.a('string');
    });

    it('answers 404 for an unknown ASN and 422 for one that is not a number', async () => {
      expectResponse(await client.get('/registry/v1/asns/64512'))
        .status(404)
        .detail('AS64512 not found in the registry');
      expectResponse(await client.get('/registry/v1/asns/abc')).status(422);
      expectResponse(await client.get('/registry/v1/asns/64512/mntners')).status(404);
      expectResponse(await client.get('/registry/v1/asns/64512/verification-options')).status(404);
    });

    it('lists the maintainers that exist, in mnt-by order', async () => {
      const res = await client.get('/registry/v1/asns/4242420001/mntners');
      expectResponse(res).status(200);
      expect(res.body.mntners.map((m: { mntner: string }) => m.mntner)).to.deep.equal(['ALPHA-MNT', 'BETA-MNT']);
      expect(res.body.mntners[1].asns).to.deep.equal([4242420001, 4242420002]);
      expect((await client.get('/registry/v1/asns/4242420003/mntners')).body).to.deep.equal({ asn: 4242420003, mntners: [] });
    });

    it('lists pgp, ssh and email options per maintainer and ignores the oddities', async () => {
      const res = await client.get('/registry/v1/asns/4242420001/verification-options');
      expectResponse(res)
        .status(200)
        .body({ asn: 4242420001, as_name: 'ALPHA-AS', mntners: ['ALPHA-MNT', 'BETA-MNT'] });
      const options = res.body.options as { id: string; mntner: string; kind: string; method: string; value: string; comment: string; hardware_key: boolean }[];
      expect(options.map(({ mntner, kind, method, value, comment, hardware_key }) => [mntner, kind, method, value, comment, hardware_key])).to.deep.equal([
        ['ALPHA-MNT', 'pgp', 'pgp-fingerprint', ALPHA_FPR, '', false],
        ['ALPHA-MNT', 'pgp', 'pgp-fingerprint', KEYCERT_FPR, 'PGPKEY-F164E04F', false],
        ['ALPHA-MNT', 'ssh', 'ssh-ed25519', ALPHA_KEY, 'alpha@laptop', false],
        ['ALPHA-MNT', 'ssh', 'sk-ssh-ed25519@openssh.com', ALPHA_SK_KEY, 'yubikey', true],
        ['ALPHA-MNT', 'email', 'e-mail', 'alice@alpha.example', 'Alice Alpha (ALPHA-DN42)', false],
        ['ALPHA-MNT', 'email', 'e-mail', 'noc@alpha.example', 'Alice Alpha (ALPHA-DN42)', false],
        ['ALPHA-MNT', 'email', 'e-mail', 'carol@alpha.example', 'Carol (CAROL-DN42)', false],
        ['BETA-MNT', 'pgp', 'pgp-fingerprint', BETA_FPR, '', false],
        ['BETA-MNT', 'ssh', 'ssh-rsa', BETA_RSA_KEY, '', false],
        ['BETA-MNT', 'email', 'e-mail', 'alice@alpha.example', 'Alice Alpha (ALPHA-DN42)', false],
        ['BETA-MNT', 'email', 'e-mail', 'noc@alpha.example', 'Alice Alpha (ALPHA-DN42)', false],
      ]);
      expect(new Set(options.map((o) => o.id)).size).to.equal(options.length);
    });

    it('gives an ASN whose maintainers have no objects no options', async () => {
      expectResponse(await client.get('/registry/v1/asns/4242420003/verification-options'))
        .status(200)
        .body({ mntners: [], options: [] });
    });

    it('returns routes of every origin, and empty lists for an unknown ASN', async () => {
      expect((await client.get('/registry/v1/asns/4242420001/routes')).body).to.deep.equal({
        asn: 4242420001,
        route: ['172.20.1.0/24', '172.20.2.0/26'],
        route6: ['fd42:1::/48'],
      });
      expect((await client.get('/registry/v1/asns/4242420002/routes')).body).to.deep.equal({ asn: 4242420002, route: ['172.20.1.0/24'], route6: [] });
      expectResponse(await client.get('/registry/v1/asns/64512/routes'))
        .status(200)
        .body({ asn: 64512, route: [], route6: [] });
    });

    it('returns identity data, falling back field by field', async () => {
      expect((await client.get('/registry/v1/asns/4242420001/identity')).body).to.deep.equal({
        asn: 4242420001,
        as_name: 'ALPHA-AS',
        mnt_by: ['ALPHA-MNT', 'BETA-MNT'],
        person: 'ALPHA-DN42',
        name: 'Alice Alpha',
        email: 'alice@alpha.example',
        route: ['172.20.1.0/24', '172.20.2.0/26'],
        route6: ['fd42:1::/48'],
      });
      expect((await client.get('/registry/v1/asns/4242420002/identity')).body).to.deep.include({
        person: 'BETA-DN42',
        name: 'Bob Beta',
        email: null,
        route: ['172.20.1.0/24'],
      });
      expect((await client.get('/registry/v1/asns/4242420003/identity')).body).to.deep.equal({
        asn: 4242420003,
        as_name: null,
        mnt_by: ['GHOST-MNT'],
        person: null,
        name: null,
        email: null,
        route: [],
        route6: [],
      });
      expectResponse(await client.get('/registry/v1/asns/64512/identity'))
        .status(200)
        .body({ as_name: null, mnt_by: [], email: null });
    });
  });

  describe('objects', () => {
    it('returns a maintainer by case-insensitive name, 404 when unknown', async () => {
      const res = await client.get('/registry/v1/mntners/beta-mnt');
      expectResponse(res)
        .status(200)
        .body({ mntner: 'BETA-MNT', admin_c: ['BETA-DN42'], mnt_by: ['BETA-MNT'], asns: [4242420001, 4242420002] });
      expect(res.body.auth).to.deep.equal([`pgp-fingerprint ${BETA_FPR}`, BETA_RSA_KEY]);
      expectResponse(await client.get('/registry/v1/mntners/NOPE-MNT'))
        .status(404)
        .detail('maintainer NOPE-MNT not found in the registry');
    });

    it('returns a key-cert by fingerprint whatever its spacing and case', async () => {
      const res = await client.get(`/registry/v1/key-certs/${encodeURIComponent(spaced(KEYCERT_FPR).toLowerCase())}`);
      expectResponse(res)
        .status(200)
        .body({ key_cert: 'PGPKEY-F164E04F', fingerprint: KEYCERT_FPR, method: 'PGP', owner: ['Alpha <alpha@example.net>'], mnt_by: ['ALPHA-MNT'] });
      expect(res.body.armor).to.equal(
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZabcdefghijklmnopqrstuvwxyz0123456789\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----',
      );
      expectResponse(await client.get(`/registry/v1/key-certs/${ALPHA_FPR}`))
        .status(404)
        .detail(`key-cert ${ALPHA_FPR} not found in the registry`);
      expectResponse(await client.get('/registry/v1/key-certs/F164E04F')).status(422);
    });
  });
});
