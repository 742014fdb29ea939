import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { projectVersion } from '../../infra/version.js';
import { dn42Control, ROOT } from '../support/cli.js';

/** Every command `dn42-control --help` must list. */
const COMMANDS = [
  'serve',
  'migrate',
  'projections',
  'events',
  'accounts',
  'identity',
  'config',
  'nodes',
  'peerings',
  'desired-state',
  'enrollment-tokens',
  'oauth-clients',
  'registry',
];

const { BUNDLE, freshBundle } = (await import(pathToFileURL(join(ROOT, 'cli/bundle.mjs')).href)) as { BUNDLE: string; freshBundle(): string | undefined };

describe('dn42-control --help and the prebuilt command line', function () {
  this.timeout(120_000);
  let dir: string;
  /** Loaded before the command: prints LOADER on stderr when anything registers a module loader (tsx does). */
  let watchLoaders: Record<string, string>;

  const build = () => execFileSync(process.execPath, [join(ROOT, 'cli/build-bundle.mjs')], { cwd: ROOT, encoding: 'utf8' });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dn42-help-'));
    const hook = join(dir, 'watch-loaders.mjs');
    writeFileSync(
      hook,
      `import module from 'node:module';
const register = module.register;
module.register = (...args) => { process.stderr.write('LOADER\\n'); return register.apply(module, args); };
module.syncBuiltinESMExports();
`,
    );
    watchLoaders = { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` };
    expect(build()).to.match(/^\.build\/cli\/main\.mjs: from \d+ sources\n$/);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    build(); // fresh again, whatever a test did to its time
  });

  it('--help exits 0 and lists every command, from the bundle without a TypeScript loader', async () => {
    expect(freshBundle()).to.equal(BUNDLE);
    const run = await dn42Control(['--help'], watchLoaders);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.equal('');
    for (const command of COMMANDS) expect(run.stdout, command).to.match(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('--version prints the project version from the bundle', async () => {
    const run = await dn42Control(['--version'], watchLoaders);
    expect(run.code).to.equal(0);
    expect(run.stderr).to.equal('');
    expect(run.stdout).to.equal(`${projectVersion()}\n`);
  });

  it('an action run from the bundle registers tsx first and loads the TypeScript sources', async () => {
    const run = await dn42Control(['config'], { ...watchLoaders, DATA_DIR: dir, LOG_LEVEL: 'warn' });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.equal('LOADER\n');
    expect(run.stdout).to.include(`DATA_DIR=${dir}\n`).and.include('METRICS_TOKEN=(unset)\n');
  });

  it('a management command runs from the bundle whole, without a TypeScript loader', async () => {
    const run = await dn42Control(['nodes', 'list', '--server', 'http://127.0.0.1:9', '--token', 'help-spec-token-0123456789'], watchLoaders);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/^dn42-control: .*127\.0\.0\.1:9/);
    expect(run.stderr).to.not.include('LOADER');
  });

  it('a bundle older than one of its sources is not used: the same help through tsx', async () => {
    const fresh = await dn42Control(['--help'], {});
    const built = statSync(BUNDLE).mtime;
    utimesSync(BUNDLE, built, new Date(0));
    try {
      expect(freshBundle()).to.equal(undefined);
      const run = await dn42Control(['--help'], watchLoaders);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('LOADER\n');
      expect(run.stdout).to.equal(fresh.stdout);
    } finally {
      utimesSync(BUNDLE, built, built);
    }
  });
});
