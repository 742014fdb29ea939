import { expect } from 'chai';
import { createRegistryApp } from '../../../http/registry/app.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { RegistrySyncer } from '../../../infra/registry/sync.js';
import { api } from '../../support/http.js';
import { RegistryRepo, registryEnv, rpsl, sshKey, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const TOKEN = 'registry-service-token-for-specs';
const FILLERS = 3000;

/**
 * A reader during a sync sees the old commit or the new one, never a mix. Branch
 * `a` and branch `b` differ in every table one answer reads (aut-num, mntners,
 * auth options, persons, routes); the upstream HEAD is switched between them.
 */
describe('Registry replica reads during a sync', function () {
  this.timeout(120_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let close: () => Promise<void>;
  let pause: (() => Promise<void>) | undefined;
  let syncer: RegistrySyncer;
  const answers: Record<'a' | 'b', string[]> = { a: [], b: [] };

  const PATHS = ['/registry/v1/asns/4242420001/verification-options', '/registry/v1/asns/4242420001/identity'];
  /** Each answer on its own: two requests may straddle a sync, one answer may not. */
  const read = async () => {
    const out: string[] = [];
    for (const path of PATHS) {
      const res = await client.get(path);
      expect(res.status).to.equal(200);
      out.push(JSON.stringify(res.body));
    }
    return out;
  };
  const checkout = (branch: 'a' | 'b') => repo.git('checkout', '--quiet', branch);

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    for (let i = 0; i < FILLERS; i++) {
      const prefix = `10.${(i >> 8) & 255}.${i & 255}.0/24`;
      repo.put(
        'route',
        prefix,
        rpsl([
          ['route', prefix],
          ['origin', `AS${4242421000 + (i % 500)}`],
          ['mnt-by', 'FILL-MNT'],
          ['source', 'DN42'],
        ]),
      );
    }
    repo.commit('a');
    repo.git('branch', 'a');
    repo
      .put(
        'aut-num',
        'AS4242420001',
        rpsl([
          ['aut-num', 'AS4242420001'],
          ['as-name', 'ALPHA-AS-B'],
          ['admin-c', 'GAMMA-DN42'],
          ['mnt-by', 'GAMMA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'mntner',
        'GAMMA-MNT',
        rpsl([
          ['mntner', 'GAMMA-MNT'],
          ['auth', sshKey('ssh-ed25519', 'gamma')],
          ['mnt-by', 'GAMMA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'person',
        'GAMMA-DN42',
        rpsl([
          ['person', 'Gina Gamma'],
          ['e-mail', 'gina@gamma.example'],
          ['nic-hdl', 'GAMMA-DN42'],
          ['source', 'DN42'],
        ]),
      )
      .remove('route', '172.20.2.0/26')
      .put(
        'route',
        '172.20.9.0/24',
        rpsl([
          ['route', '172.20.9.0/24'],
          ['origin', 'AS4242420001'],
          ['source', 'DN42'],
        ]),
      );
    repo.commit('b');
    repo.git('branch', 'b');

    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    syncer = new RegistrySyncer(sys.context, { beforeCommit: () => pause?.() ?? Promise.resolve() });
    const started = await startApp(createRegistryApp(sys.context, { syncer }));
    close = started.close;
    client = api(started.url, { token: TOKEN });

    for (const branch of ['a', 'b'] as const) {
      checkout(branch);
      await syncer.sync();
      answers[branch] = await read();
    }
    PATHS.forEach((_, i) => expect(answers.a[i]).to.not.equal(answers.b[i]));
    expect(answers.a.join()).to.contain('ALPHA-MNT').and.not.contain('GAMMA-MNT');
    expect(answers.b.join()).to.contain('gina@gamma.example').and.contain('172.20.9.0/24');
  });
  after(async () => {
    await close?.();
    await sys?.close();
    repo?.destroy();
  });

  it('serves the old commit while the new one is loaded but not committed, and the new one after', async () => {
    checkout('a');
    let during: string[] = [];
    pause = async () => {
      during = await read();
    };
    try {
      await syncer.sync();
    } finally {
      pause = undefined;
    }
    expect(during).to.deep.equal(answers.b);
    expect(await read()).to.deep.equal(answers.a);
  });

  it('never mixes two commits in one answer while syncs run back to back', async () => {
    let running = true;
    const seen: Record<string, number> = {};
    const mixed: string[] = [];
    const reader = async () => {
      while (running) {
        const answer = await read();
        answer.forEach((text, i) => {
          const which = text === answers.a[i] ? 'a' : text === answers.b[i] ? 'b' : 'mixed';
          seen[which] = (seen[which] ?? 0) + 1;
          if (which === 'mixed') mixed.push(text);
        });
      }
    };
    const readers = Array.from({ length: 4 }, reader);
    for (let i = 0; i < 6; i++) {
      checkout(i % 2 === 0 ? 'b' : 'a');
      await syncer.sync();
    }
    running = false;
    await Promise.all(readers);
    expect(mixed, 'answers that mix two commits').to.deep.equal([]);
    expect((seen.a ?? 0) + (seen.b ?? 0)).to.be.greaterThan(6);
  });
});
