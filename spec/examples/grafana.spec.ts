import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createRegistryApp } from '../../http/registry/app.js';
import { migrate } from '../../infra/db/migrate.js';
import { registryMigrations } from '../../infra/registry/store.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from '../support/registry.js';
import { startApp } from '../support/system.js';
import { startAgents, type AgentHarness } from '../http/control/agent/telemetry-support.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DASHBOARD = join(ROOT, 'examples/grafana/dn42-control.json');
const RULES = join(ROOT, 'examples/prometheus/alerts.yml');
const PROMTOOL = '/usr/bin/promtool';

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; datasource?: { type: string; uid: string } }[];
}

/** The Grafana variables the dashboard's queries use, as Prometheus would see them after Grafana expanded them. */
const expandVariables = (expr: string) => expr.replaceAll('$__rate_interval', '5m');

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads: identifiers that are not a
 * function (followed by `(`), a keyword, a label of a matcher or of a
 * `by`/`without`/`on` list, a duration or a string.
 */
export function metricNames(expr: string): string[] {
  const bare = expandVariables(expr)
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = [...bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?/g)]
    .filter((m) => m[2] === undefined)
    .map((m) => m[1])
    .filter((n) => !KEYWORDS.has(n.toLowerCase()));
  return [...new Set(names)];
}

const panels = (): Panel[] => (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;
const exprs = () => panels().flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, target: t })));
const ruleExprs = () => [...readFileSync(RULES, 'utf8').matchAll(/^\s*expr: (.+)$/gm)].map((m) => m[1]);

describe('examples/grafana/dn42-control.json', function () {
  this.timeout(60_000);

  it('is a dashboard whose every panel queries the templated Prometheus data source', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; templating: { list: { name: string; type: string; query: string }[] } };
    expect(dashboard.uid).to.equal('dn42-control');
    expect(dashboard.templating.list).to.deep.include({
      name: 'datasource',
      type: 'datasource',
      query: 'prometheus',
      label: 'Prometheus',
      current: {},
      hide: 0,
    });
    const queried = panels().filter((p) => p.type !== 'row');
    expect(queried).to.have.length.above(10);
    expect(new Set(panels().map((p) => p.id)).size, 'panel ids unique').to.equal(panels().length);
    for (const p of queried) {
      expect(p.datasource, p.title).to.deep.equal({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets, p.title).to.not.be.empty;
      for (const t of p.targets!) expect(t.expr.trim(), `${p.title} ${t.refId}`).to.not.equal('');
    }
  });

  it('reads the metric names out of PromQL (the check below stands on it)', () => {
    expect(
      metricNames('histogram_quantile(0.95, sum by (le, job) (rate(dn42_http_request_duration_seconds_bucket{job=~"a|b"}[$__rate_interval])))'),
    ).to.deep.equal(['dn42_http_request_duration_seconds_bucket']);
    expect(metricNames('max by (node_id) (a_metric{health="down"}) > 0 and on (node_id) b:recorded offset 5m')).to.deep.equal(['a_metric', 'b:recorded']);
  });

  describe('against the /metrics of running control and registry servers', () => {
    let h: AgentHarness;
    let repo: RegistryRepo;
    let registry: Awaited<ReturnType<typeof startApp>>;
    const exposed = new Set<string>();

    before(async () => {
      repo = writeBaseRegistry(new RegistryRepo());
      repo.commit('base');
      h = await startAgents(['n1'], registryEnv(repo.dir));
      await migrate(h.sys.pool, [registryMigrations]);
      registry = await startApp(createRegistryApp(h.sys.context));
      for (const url of [h.url, registry.url]) {
        const text = await (await fetch(`${url}/metrics`)).text();
        for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
          exposed.add(name);
          if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(name + suffix);
        }
      }
    });
    after(async () => {
      await registry?.close();
      await h?.close();
      repo?.destroy();
    });

    it('every query of the dashboard reads only series our services expose', () => {
      for (const { panel, target } of exprs()) {
        const names = metricNames(target.expr);
        expect(names, `${panel.title} ${target.refId}: ${target.expr}`).to.not.be.empty;
        for (const name of names) expect([...exposed], `${panel.title}: ${name}`).to.include(name);
      }
    });

    it('so does every alert rule of examples/prometheus/alerts.yml, and the dashboard shows every series the rules read', () => {
      const shown = new Set(exprs().flatMap(({ target }) => metricNames(target.expr)));
      const rules = ruleExprs();
      expect(rules).to.have.length(readFileSync(RULES, 'utf8').match(/- alert: /g)!.length);
      for (const expr of rules) {
        for (const name of metricNames(expr)) {
          expect([...exposed], `${expr}: ${name}`).to.include(name);
          expect([...shown], `${name} on the dashboard`).to.include(name);
        }
      }
    });
  });

  it('every query parses as PromQL (promtool check rules, each as a recording rule)', async function () {
    if (!existsSync(PROMTOOL)) {
      console.warn(`    skipped: ${PROMTOOL} is absent (CI installs Debian's prometheus)`);
      this.skip();
    }
    const dir = mkdtempSync(join(tmpdir(), 'dn42-grafana-'));
    try {
      const rules = exprs().map(
        ({ panel, target }) => `      - record: dashboard:panel_${panel.id}_${target.refId}\n        expr: ${JSON.stringify(expandVariables(target.expr))}`,
      );
      writeFileSync(join(dir, 'dashboard.rules.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
      const { stdout } = await promisify(execFile)(PROMTOOL, ['check', 'rules', join(dir, 'dashboard.rules.yml')]);
      expect(stdout).to.include(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
