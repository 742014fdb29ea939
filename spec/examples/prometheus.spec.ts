import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { expectResponse } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { eventually, within } from '../support/wait.js';
import { snapshot, startAgents, type AgentHarness } from '../http/control/agent/telemetry-support.js';

const PROMTOOL = '/usr/bin/promtool';
const PROMETHEUS = '/usr/bin/prometheus';
const DIR = resolve(import.meta.dirname, '../../examples/prometheus');
const RULES = join(DIR, 'alerts.yml');
const TESTS = join(DIR, 'alerts.test.yml');
const run = promisify(execFile);

/** Debian's `prometheus` package, which `.ci/run` installs; without it these specs skip and say so. */
function skipWithout(ctx: Mocha.Context, tool: string): void {
  if (existsSync(tool)) return;
  console.warn(`    skipped: ${tool} is absent (CI installs Debian's prometheus)`);
  ctx.skip();
}

const alertNames = (rules: string) => [...rules.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]);

describe('examples/prometheus/alerts.yml under promtool', function () {
  this.timeout(60_000);
  before(function () {
    skipWithout(this, PROMTOOL);
  });

  it('promtool check rules accepts every rule', async () => {
    const { stdout } = await run(PROMTOOL, ['check', 'rules', RULES]);
    expect(stdout).to.include(`SUCCESS: ${alertNames(readFileSync(RULES, 'utf8')).length} rules found`);
  });

  it('promtool test rules passes alerts.test.yml, which sees every rule both firing and not firing', async () => {
    const { stdout } = await run(PROMTOOL, ['test', 'rules', TESTS], { cwd: DIR });
    expect(stdout).to.include('SUCCESS');
    // Each `alertname:` line of the tests is followed by its `exp_alerts`: `[]` (quiet) or a list (firing).
    const checks = [...readFileSync(TESTS, 'utf8').matchAll(/alertname: (\S+)\n\s*exp_alerts:( \[\])?/g)].map((m) => ({ name: m[1], fires: !m[2] }));
    for (const name of alertNames(readFileSync(RULES, 'utf8'))) {
      expect(
        checks.filter((c) => c.name === name && c.fires),
        `${name} firing`,
      ).to.not.be.empty;
      expect(
        checks.filter((c) => c.name === name && !c.fires),
        `${name} quiet`,
      ).to.not.be.empty;
    }
  });
});

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

describe('A real Prometheus scraping a running control server with examples/prometheus/alerts.yml', function () {
  this.timeout(90_000);
  let h: AgentHarness;
  let dir: string;
  let prometheus: ChildProcess | undefined;
  let api: string;
  let output = '';

  before(async function () {
    skipWithout(this, PROMETHEUS);
    h = await startAgents(['n1']);
    dir = mkdtempSync(join(tmpdir(), 'dn42-prometheus-'));
    const target = new URL(h.url).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES)}]`,
        'scrape_configs:',
        `  - { job_name: control, static_configs: [{ targets: [${JSON.stringify(target)}] }] }`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    // A foreground child of the spec, stopped by its pid in `after`.
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    prometheus.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await eventually(async () => (await fetch(`${api}/-/ready`)).ok, { timeoutMs: 30_000, what: 'Prometheus ready', explain: () => output.slice(-2000) });
  });

  after(async () => {
    const child = prometheus;
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((done) => child.once('close', done));
      process.kill(child.pid, 'SIGTERM');
      await within(closed, 20_000, 'Prometheus to stop');
    }
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = async <T>(path: string): Promise<T> => {
    const body = (await (await fetch(`${api}${path}`)).json()) as { status: string; data: T };
    expect(body.status, JSON.stringify(body)).to.equal('success');
    return body.data;
  };
  const query = async (q: string) => (await get<{ result: { value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(q)}`)).result;
  const rules = async () =>
    (await get<{ groups: { rules: { name: string; health: string; lastEvaluation: string }[] }[] }>('/api/v1/rules')).groups.flatMap((g) => g.rules);
  const staleAlerts = async () => (await get<{ alerts: Alert[] }>('/api/v1/alerts')).alerts.filter((a) => a.labels.alertname === 'Dn42NodeStale');

  it('loads every rule, scrapes /metrics, and fires Dn42NodeStale when the node stops reporting', async () => {
    expect((await rules()).map((r) => r.name).sort()).to.deep.equal(alertNames(readFileSync(RULES, 'utf8')).sort());

    // The node reports: Prometheus sees it ok, and the rule, evaluated after that scrape, stays quiet.
    expectResponse(
      await h.agent.n1.post('/agent/runtime-snapshot', snapshot('n1', { ebgp_a: 'established' }, { captured_at: h.sys.clock.now().toISOString() })),
    ).status(200);
    const seenOkAt = await eventually(
      async () => {
        const [ok] = await query('dn42_nodes{health="ok",job="control"}');
        return ok?.value[1] === '1' && ok.value[0];
      },
      { timeoutMs: 30_000, what: 'a scrape showing n1 ok', explain: () => output.slice(-2000) },
    );
    await eventually(
      async () => {
        const rule = (await rules()).find((r) => r.name === 'Dn42NodeStale')!;
        return rule.health === 'ok' && Date.parse(rule.lastEvaluation) / 1000 > seenOkAt + 1 && rule;
      },
      { timeoutMs: 30_000, what: 'an evaluation of Dn42NodeStale after that scrape' },
    );
    expect(await staleAlerts()).to.deep.equal([]);

    // 301 s without a snapshot on the server's clock: n1 is stale at the next scrape.
    h.sys.clock.advance(301_000);
    const [alert] = await eventually(
      async () => {
        const alerts = await staleAlerts();
        return alerts.length > 0 && alerts[0].state === 'firing' && alerts;
      },
      {
        timeoutMs: 30_000,
        what: 'Dn42NodeStale firing',
        explain: async () => ({ alerts: await staleAlerts(), stale: await query('dn42_nodes{health="stale"}') }),
      },
    );
    expect(alert.labels).to.deep.equal({ alertname: 'Dn42NodeStale', health: 'stale', severity: 'warning' });
    expect(alert.annotations.summary).to.equal('1 node(s) stale');
  });
});
