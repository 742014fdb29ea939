import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderAll } from '../../../agent/render/index.js';
import { desiredState, runAgent, tempDir, wireguardInterface } from '../support/core.js';
import { validateDesiredState, type DesiredState } from '../../../domain/desired-state/schema.js';

/** Offline runs (`--desired-state`): the plan, the rendered files, and strict validation. */
describe('agent: offline --plan-only and --once --mode write-rendered', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let stateDir: string;
  let docPath: string;
  const rendered = () => join(stateDir, 'nodes', 'fra1', 'rendered');
  const doc = desiredState('fra1', { interfaces: [wireguardInterface('dn42_a', 51801)] });

  beforeEach(async () => {
    dir = await tempDir();
    stateDir = join(dir.path, 'state');
    docPath = join(dir.path, 'desired.json');
    await writeFile(docPath, JSON.stringify(doc));
  });
  afterEach(async () => {
    await dir.remove();
  });

  const plan = () => runAgent(['--plan-only', '--desired-state', docPath, '--state-dir', stateDir]);
  const write = () => runAgent(['--once', '--mode', 'write-rendered', '--desired-state', docPath, '--state-dir', stateDir]);

  it('plans every rendered file as added, writes nothing (not even a key), and prints the JSON summary', async () => {
    const run = await plan();
    expect(run.code, run.stderr).to.equal(0);
    const summary = JSON.parse(run.stdout);
    const state = structuredClone(doc);
    validateDesiredState(state);
    const expected = renderAll({
      state: state as DesiredState,
      wireguardPrivateKey: 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=',
      renderedDir: rendered(),
    }).map((f) => f.path);
    expect(summary).to.deep.include({
      node_id: 'fra1',
      mode: 'plan-only',
      generation: null,
      status: 'planned',
      rendered_dir: rendered(),
      error: null,
      steps: [],
      drift: [],
    });
    expect(summary.changes).to.deep.equal({ added: [...expected].sort(), changed: [], removed: [], unchanged: 0 });
    expect(summary.changes.added).to.include.members(['bird/bird.conf', 'wireguard/dn42_a.conf', 'interfaces/dn42_a.json']);
    expect(existsSync(stateDir), 'plan-only created the state dir').to.equal(false);
  });

  it('writes the rendered set (key file 0600, WireGuard configs 0600), after which the plan is empty', async () => {
    const run = await write();
    expect(run.code, run.stderr).to.equal(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.status).to.equal('written');
    expect(summary.changes.added).to.include('bird/bird.conf');
    expect((await stat(join(rendered(), 'wireguard/dn42_a.conf'))).mode & 0o777).to.equal(0o600);
    expect((await stat(join(rendered(), 'bird/bird.conf'))).mode & 0o777).to.equal(0o644);
    const key = join(stateDir, 'nodes', 'fra1', 'wireguard-private.key');
    expect((await stat(key)).mode & 0o777).to.equal(0o600);
    expect(await readFile(join(rendered(), 'wireguard/dn42_a.conf'), 'utf8')).to.contain(`PrivateKey = ${(await readFile(key, 'utf8')).trim()}`);

    const again = JSON.parse((await plan()).stdout);
    expect(again.changes).to.deep.equal({ added: [], changed: [], removed: [], unchanged: summary.changes.added.length });
  });

  it("creates the directories BIRD and BIND (their own users) must pass through, even under the unit's umask 077", async () => {
    const run = await runAgent(['--once', '--mode', 'write-rendered', '--desired-state', docPath, '--state-dir', stateDir], 30_000, { umask: '077' });
    expect(run.code, run.stderr).to.equal(0);
    const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
    expect(await mode(stateDir)).to.equal('711');
    expect(await mode(join(stateDir, 'nodes'))).to.equal('711');
    expect(await mode(join(stateDir, 'nodes', 'fra1'))).to.equal('711');
    expect(await mode(rendered())).to.equal('755');
    expect(await mode(join(rendered(), 'bird'))).to.equal('755');
    expect(await mode(join(rendered(), 'bird/bird.conf'))).to.equal('644');
    expect(await mode(join(rendered(), 'wireguard/dn42_a.conf'))).to.equal('600');
    expect(await mode(join(stateDir, 'nodes', 'fra1', 'wireguard-private.key'))).to.equal('600');
  });

  it('plans a changed file, a stale file and a wrong mode without touching them', async () => {
    await write();
    const ebgp = join(rendered(), 'bird/ebgp.conf');
    await writeFile(ebgp, '# edited by hand\n');
    await writeFile(join(rendered(), 'stale.conf'), 'old\n');
    await chmod(join(rendered(), 'bird/internal.conf'), 0o600);
    const summary = JSON.parse((await plan()).stdout);
    expect(summary.changes.changed).to.deep.equal(['bird/ebgp.conf', 'bird/internal.conf']);
    expect(summary.changes.removed).to.deep.equal(['stale.conf']);
    expect(summary.changes.added).to.deep.equal([]);
    expect(await readFile(ebgp, 'utf8')).to.equal('# edited by hand\n');
    expect(existsSync(join(rendered(), 'stale.conf'))).to.equal(true);

    const rewritten = JSON.parse((await write()).stdout);
    expect(rewritten.changes.changed).to.deep.equal(['bird/ebgp.conf', 'bird/internal.conf']);
    expect(existsSync(join(rendered(), 'stale.conf'))).to.equal(false);
    expect(await readFile(ebgp, 'utf8')).to.contain('protocol bgp');
  });

  it('keeps the generation of a GET /agent/desired-state answer used as the document', async () => {
    await writeFile(docPath, JSON.stringify({ node_id: 'fra1', generation: 7, reason: 'test', created_at: '2026-11-01T12:00:00Z', state: doc }));
    const summary = JSON.parse((await plan()).stdout);
    expect(summary).to.deep.include({ generation: 7, status: 'planned' });
  });

  it('refuses a node id that would leave the state dir', async () => {
    await writeFile(docPath, JSON.stringify(desiredState('../../escape')));
    const run = await write();
    expect(run.code).to.equal(1);
    expect(JSON.parse(run.stdout).error).to.equal("invalid node id \"../../escape\": letters, digits, '.', '_', '-'");
    expect(existsSync(join(dir.path, 'escape'))).to.equal(false);
  });

  it('refuses a document with an unknown field loudly: exit 1, status failed, the field named, nothing written', async () => {
    await writeFile(docPath, JSON.stringify({ ...doc, bird: { ...(doc.bird as object), future_knob: true } }));
    for (const run of [await write(), await plan()]) {
      expect(run.code).to.equal(1);
      const summary = JSON.parse(run.stdout);
      expect(summary.status).to.equal('failed');
      expect(summary.error).to.match(/desired state failed validation: state\.bird\.future_knob: unknown field/);
    }
    expect(existsSync(rendered())).to.equal(false);
  });

  it('writes into --rendered-dir when given, with BIRD includes pointing there', async () => {
    const elsewhere = join(dir.path, 'etc-bird', 'dn42');
    const run = await runAgent(['--once', '--mode', 'write-rendered', '--desired-state', docPath, '--state-dir', stateDir, '--rendered-dir', elsewhere]);
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout)).to.deep.include({ rendered_dir: elsewhere, status: 'written' });
    expect(await readFile(join(elsewhere, 'bird/bird.conf'), 'utf8')).to.contain(`include "${elsewhere}/bird/ebgp.conf";`);
    expect(existsSync(rendered()), 'nothing in the default rendered dir').to.equal(false);
  });
});
