// The registry replica at the real registry's size: a generated git registry of
// about 20,000 objects in the real class distribution, synced from scratch
// (clone, parse, load, event), then `POST /registry/v1/names` with 1,000 ASNs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistryApp } from '../http/registry/app.js';
import { migrate } from '../infra/db/migrate.js';
import { registryMigrations } from '../infra/registry/store.js';
import { RegistrySyncer } from '../infra/registry/sync.js';
import { fingerprint, RegistryRepo, rpsl, sshKey } from '../spec/support/registry.js';
import { createTestSystem, startApp } from '../spec/support/system.js';
import { envInt, MemorySampler, now, percentile, progress, report, round, type Benchmark } from './support.js';

const TOKEN = 'bench-registry-service-token';

/** Objects per class of the real registry (issue 6), about 20,000 in all. */
const DISTRIBUTION = {
  'aut-num': 3000,
  mntner: 2800,
  person: 2800,
  route: 2300,
  route6: 2100,
  inetnum: 2700,
  inet6num: 2200,
  'key-cert': 80,
  role: 300,
  'as-set': 300,
  organisation: 200,
  dns: 600,
  schema: 20,
};

/** Writes the registry's files straight into the work tree (one commit afterwards). */
function generate(dir: string, scale: number): number {
  let count = 0;
  const put = (type: string, name: string, text: string) => {
    const path = join(dir, 'data', type);
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, name.replace(/\//g, '_')), text);
    count++;
  };
  const n = (type: keyof typeof DISTRIBUTION) => Math.round(DISTRIBUTION[type] * scale);
  const mntners = n('mntner');
  const persons = n('person');
  const asnOf = (i: number) => 4242420000 + i;
  for (let i = 0; i < n('key-cert'); i++) {
    const fpr = fingerprint(`key${i}`);
    put(
      'key-cert',
      `PGPKEY-${fpr.slice(-8)}`,
      rpsl([
        ['key-cert', `PGPKEY-${fpr.slice(-8)}`],
        ['method', 'PGP'],
        ['owner', `Owner ${i} <o${i}@example.net>`],
        ['fingerpr', fpr.match(/.{4}/g)!.join(' ')],
        ...Array.from({ length: 12 }, () => ['certif', 'mQINBGAAAAABEADabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV'] as const),
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < mntners; i++) {
    const auth: (readonly [string, string])[] = [];
    if (i % 3 === 0) auth.push(['auth', `pgp-fingerprint ${fingerprint(`m${i}`)}`]);
    if (i < n('key-cert')) auth.push(['auth', `PGPKEY-${fingerprint(`key${i}`).slice(-8)}`]);
    if (i % 2 === 0) auth.push(['auth', `${sshKey('ssh-ed25519', `m${i}`)} user@host`]);
    if (i % 7 === 0) auth.push(['auth', `${sshKey('ssh-rsa', `r${i}`)}`]);
    if (i % 50 === 0) auth.push(['auth', `${sshKey('sk-ssh-ed25519@openssh.com', `s${i}`)}`]);
    put(
      'mntner',
      `M${i}-MNT`,
      rpsl([
        ['mntner', `M${i}-MNT`],
        ['admin-c', `P${i % persons}-DN42`],
        ['tech-c', `P${(i + 1) % persons}-DN42`],
        ...auth,
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < persons; i++) {
    const mails: (readonly [string, string])[] = i % 3 === 0 ? [] : [['e-mail', `p${i}@example.net  `]];
    if (i % 10 === 0) mails.push(['e-mail', `noc${i}@example.net`]);
    put('person', `P${i}-DN42`, rpsl([['person', `Person ${i}`], ...mails, ['nic-hdl', `P${i}-DN42`], ['mnt-by', `M${i % mntners}-MNT`], ['source', 'DN42']]));
  }
  for (let i = 0; i < n('role'); i++)
    put(
      'role',
      `R${i}-DN42`,
      rpsl([
        ['role', `Role ${i}`],
        ['admin-c', `P${i}-DN42`],
        ['nic-hdl', `R${i}-DN42`],
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  for (let i = 0; i < n('aut-num'); i++) {
    const mntBy: (readonly [string, string])[] = [['mnt-by', `M${i % mntners}-MNT`]];
    if (i % 20 === 0) mntBy.push(['mnt-by', `M${(i + 7) % mntners}-MNT`]);
    put(
      'aut-num',
      `AS${asnOf(i)}`,
      rpsl([
        ['aut-num', `AS${asnOf(i)}`],
        ['as-name', `AS-NAME-${i}`],
        ['descr', `Network ${i}`],
        '                    second line',
        ['admin-c', `P${i % persons}-DN42`],
        ['tech-c', `P${i % persons}-DN42`],
        ...mntBy,
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < n('route'); i++) {
    const prefix = `172.${20 + (i >> 14)}.${(i >> 6) & 255}.${(i & 63) << 2}/30`;
    const origins: (readonly [string, string])[] = [['origin', `AS${asnOf(i % n('aut-num'))}`]];
    if (i % 25 === 0) origins.push(['origin', `AS${asnOf((i + 1) % n('aut-num'))}`]);
    put('route', prefix, rpsl([['route', prefix], ...origins, ['mnt-by', `M${i % mntners}-MNT`], ['source', 'DN42']]));
  }
  for (let i = 0; i < n('route6'); i++) {
    const prefix = `fd42:${(i + 1).toString(16)}::/48`;
    put(
      'route6',
      prefix,
      rpsl([
        ['route6', prefix],
        ['origin', `AS${asnOf(i % n('aut-num'))}`],
        ['mnt-by', `M${i % mntners}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < n('inetnum'); i++) {
    const base = `172.${20 + (i >> 14)}.${(i >> 6) & 255}.${(i & 63) << 2}`;
    put(
      'inetnum',
      `${base}/30`,
      rpsl([
        ['inetnum', `${base} - ${base}`],
        ['cidr', `${base}/30`],
        ['netname', `NET-${i}`],
        ['mnt-by', `M${i % mntners}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < n('inet6num'); i++) {
    put(
      'inet6num',
      `fd42:${(i + 1).toString(16)}::/48`,
      rpsl([
        ['inet6num', `fd42:${(i + 1).toString(16)}:: - fd42:${(i + 1).toString(16)}:ffff::`],
        ['cidr', `fd42:${(i + 1).toString(16)}::/48`],
        ['netname', `NET6-${i}`],
        ['mnt-by', `M${i % mntners}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  }
  for (let i = 0; i < n('as-set'); i++)
    put(
      'as-set',
      `AS${asnOf(i)}:AS-ALL`,
      rpsl([
        ['as-set', `AS${asnOf(i)}:AS-ALL`],
        ['members', `AS${asnOf(i)}`],
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  for (let i = 0; i < n('organisation'); i++)
    put(
      'organisation',
      `ORG-O${i}`,
      rpsl([
        ['organisation', `ORG-O${i}`],
        ['org-name', `Org ${i}`],
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  for (let i = 0; i < n('dns'); i++)
    put(
      'dns',
      `n${i}.dn42`,
      rpsl([
        ['domain', `n${i}.dn42`],
        ['nserver', `ns1.n${i}.dn42`],
        ['mnt-by', `M${i}-MNT`],
        ['source', 'DN42'],
      ]),
    );
  for (let i = 0; i < n('schema'); i++)
    put(
      'schema',
      `S${i}-SCHEMA`,
      rpsl([
        ['schema', `S${i}-SCHEMA`],
        ['ref', `dn42.s${i}`],
        ['source', 'DN42'],
      ]),
    );
  return count;
}

export const registryBench: Benchmark = {
  name: 'registry',
  description: 'registry replica: full sync of a ~20,000-object registry, POST names with 1,000 ASNs',
  async run() {
    const scale = envInt('BENCH_REGISTRY_PERCENT', 100) / 100;
    const rounds = envInt('BENCH_NAMES_ROUNDS', 300);
    const repo = new RegistryRepo();
    const cacheDir = mkdtempSync(join(tmpdir(), 'dn42-bench-cache-'));
    try {
      const t0 = now();
      const objects = generate(repo.dir, scale);
      const commit = repo.commit('generated');
      progress(`registry: ${objects} objects generated and committed in ${((now() - t0) / 1000).toFixed(1)} s`);
      // A whole test system (its own database, the real migrations) is the replica's context.
      const sys = await createTestSystem({ env: { REGISTRY_SOURCE: repo.dir, REGISTRY_SERVICE_TOKEN: TOKEN } });
      try {
        const { pool, context } = sys;
        await migrate(pool, [registryMigrations]);
        const syncer = new RegistrySyncer(context, { cacheDir });

        // Cold: empty cache, empty tables (clone, parse, load, event). Warm: forced reload of the same commit.
        const memory = new MemorySampler();
        let start = now();
        const cold = await syncer.sync();
        const coldMs = now() - start;
        const mem = memory.stop();
        const warm: number[] = [];
        for (let i = 0; i < 3; i++) {
          start = now();
          await syncer.sync({ force: true });
          warm.push(now() - start);
        }
        warm.sort((a, b) => a - b);
        const loaded = Object.entries(cold.counts).reduce((sum, [k, v]) => (k === 'malformed' ? sum : sum + v), 0);
        report({
          bench: 'registry',
          case: 'full sync',
          commit: commit.slice(0, 12),
          objects,
          loaded,
          malformed: cold.counts.malformed,
          cold_sync_s: round(coldMs / 1000),
          forced_resync_median_s: round(warm[1] / 1000),
          target_s: 5,
          ok: coldMs < 5000 && loaded === objects,
          ...mem,
        });

        const app = await startApp(createRegistryApp(context, { syncer }));
        try {
          const asns = Array.from({ length: 1000 }, (_, i) => (i % 10 === 9 ? 64512 + i : 4242420000 + ((i * 7) % DISTRIBUTION['aut-num'])));
          const body = JSON.stringify({ asns });
          const post = async () => {
            const res = await fetch(`${app.url}/registry/v1/names`, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body,
            });
            const json = (await res.json()) as { names: Record<string, string> };
            if (res.status !== 200) throw new Error(`names answered ${res.status}`);
            return Object.keys(json.names).length;
          };
          const sql = () => pool.query('SELECT asn::text, as_name FROM registry_aut_nums WHERE asn = ANY($1::bigint[]) AND as_name IS NOT NULL', [asns]);
          for (let i = 0; i < 20; i++) {
            await post();
            await sql();
          }
          const http: number[] = [];
          const base: number[] = [];
          let found = 0;
          for (let i = 0; i < rounds; i++) {
            let t = now();
            found = await post();
            http.push(now() - t);
            t = now();
            await sql();
            base.push(now() - t);
          }
          http.sort((a, b) => a - b);
          base.sort((a, b) => a - b);
          report({
            bench: 'registry',
            case: 'POST names, 1000 ASNs',
            rounds,
            names_found: found,
            p50_ms: round(percentile(http, 50)),
            p95_ms: round(percentile(http, 95)),
            target_ms: 20,
            ok: percentile(http, 50) < 20,
            baseline: { name: 'the same SELECT through pg', p50_ms: round(percentile(base, 50)), p95_ms: round(percentile(base, 95)) },
            ratio: round(percentile(base, 50) / percentile(http, 50)),
          });
        } finally {
          await app.close();
        }
      } finally {
        await sys.close();
      }
    } finally {
      repo.destroy();
      rmSync(cacheDir, { recursive: true, force: true });
    }
  },
};
