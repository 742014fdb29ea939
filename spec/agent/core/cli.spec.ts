import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCommandLine, type AgentSettings } from '../../../agent/cli.js';
import { UsageError } from '../../../agent/config.js';
import { runAgent, tempDir, writeAgentConfig } from '../support/core.js';

const parse = (args: string[]) => parseCommandLine(args, '1.0.5', () => {}) as AgentSettings;

describe('agent: dn42-agent command line', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await dir.remove();
  });

  describe('rule violations: one line on stderr, exit code 2', () => {
    const cases: [string, string[], RegExp][] = [
      ['--once with --doctor', ['--once', '--doctor', '--controller-url', 'http://127.0.0.1:1'], /^dn42-agent: --once and --doctor are mutually exclusive$/],
      ['--once with --plan-only', ['--once', '--plan-only', '--desired-state', 'x.json'], /^dn42-agent: --once and --plan-only are mutually exclusive$/],
      ['all three verbs', ['--once', '--plan-only', '--doctor'], /^dn42-agent: --once, --plan-only and --doctor are mutually exclusive$/],
      [
        '--plan-only with another --mode',
        ['--plan-only', '--mode', 'apply', '--desired-state', 'x.json'],
        /^dn42-agent: --plan-only conflicts with --mode apply$/,
      ],
      [
        '--controller-url with --desired-state',
        ['--once', '--controller-url', 'http://127.0.0.1:1', '--desired-state', 'x.json'],
        /^dn42-agent: --controller-url and --desired-state are mutually exclusive$/,
      ],
      ['daemon without --controller-url', [], /^dn42-agent: daemon mode needs --controller-url$/],
      [
        'daemon with --mode plan-only',
        ['--controller-url', 'http://127.0.0.1:1', '--mode', 'plan-only'],
        /^dn42-agent: daemon mode cannot run with --mode plan-only$/,
      ],
      ['daemon with --desired-state', ['--desired-state', 'x.json'], /^dn42-agent: --desired-state needs --once or --plan-only/],
      ['--once without a source', ['--once'], /^dn42-agent: --once needs --controller-url or --desired-state$/],
      ['an unknown --mode', ['--once', '--mode', 'dry-run', '--desired-state', 'x.json'], /^dn42-agent: option '--mode <mode>' argument 'dry-run' is invalid/],
      ['an unknown option', ['--frobnicate'], /^dn42-agent: unknown option '--frobnicate'$/],
      ['an unknown --log-level', ['--plan-only', '--desired-state', 'x.json', '--log-level', 'LOUD'], /^dn42-agent: invalid --log-level LOUD/],
      ['a missing config file', ['--doctor', '--config', '/nonexistent/agent.conf'], /^dn42-agent: cannot read config file \/nonexistent\/agent.conf: ENOENT$/],
      ['an invalid controller URL', ['--controller-url', 'ftp://x'], /^dn42-agent: invalid --controller-url ftp:\/\/x: must be http or https$/],
    ];
    // Spawned together: each is a whole `node agent/bin.mjs` start.
    let runs: Awaited<ReturnType<typeof runAgent>>[];
    before(async function () {
      this.timeout(120_000);
      runs = [];
      for (let i = 0; i < cases.length; i += 4) runs.push(...(await Promise.all(cases.slice(i, i + 4).map(([, args]) => runAgent(args)))));
    });
    cases.forEach(([what, , message], i) => {
      it(`refuses ${what}`, () => {
        const run = runs[i];
        expect(run.code, run.stderr).to.equal(2);
        expect(run.stdout).to.equal('');
        const lines = run.stderr.split('\n').filter(Boolean);
        expect(lines).to.have.length(1);
        expect(lines[0]).to.match(message);
      });
    });
  });

  it('prints its help and version with exit code 0', async () => {
    const [help, version] = await Promise.all([runAgent(['--help']), runAgent(['--version'])]);
    expect(help.code).to.equal(0);
    for (const option of [
      '--config',
      '--controller-url',
      '--enrollment-token',
      '--requested-node-id',
      '--hostname',
      '--state-dir',
      '--rendered-dir',
      '--desired-state',
      '--mode',
      '--once',
      '--plan-only',
      '--doctor',
      '--log-level',
    ]) {
      expect(help.stdout).to.contain(option);
    }
    expect(version.code).to.equal(0);
    expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+$/);
  });

  describe('defaults and the configuration file', () => {
    it('has the contract defaults: state dir, apply mode, INFO, rendered dir derived later, prefix appended to the controller URL', () => {
      const s = parse(['--controller-url', 'https://control.example/']);
      expect(s).to.deep.include({
        run: 'daemon',
        mode: 'apply',
        controllerUrl: 'https://control.example/control/v1',
        stateDir: '/var/lib/dn42-control',
        renderedDir: null,
        logLevel: 'info',
        birdSocket: '/run/bird/bird.ctl',
        birdKernel: true,
        reconcileIntervalSeconds: 300,
        heartbeatIntervalSeconds: 30,
        routingIntervalSeconds: 300,
      });
      expect(s.commands.birdc).to.deep.equal(['birdc', '-s', '/run/bird/bird.ctl']);
      expect(parse(['--controller-url', 'http://h:8080/api/v1']).controllerUrl).to.equal('http://h:8080/api/v1');
      expect(parse(['--plan-only', '--desired-state', 'x.json']).mode).to.equal('plan-only');
      expect(parse(['--once', '--mode', 'plan-only', '--desired-state', 'x.json'])).to.deep.include({ run: 'once', mode: 'plan-only' });
      expect(parse(['--doctor', '--log-level', 'WARNING']).logLevel).to.equal('warn');
    });

    it('reads key = value files; flags override them; an offline run ignores the file controller', async () => {
      const config = await writeAgentConfig(join(dir.path, 'agent.conf'), {
        controller_url: 'http://control.test:8080',
        state_dir: '/srv/dn42',
        mode: 'write-rendered',
        log_level: 'debug',
        bird_socket: '/tmp/b.ctl',
        bird_kernel: 'no',
        reconcile_interval_seconds: 60,
        routing_interval_seconds: 20,
        'command.wg': '/opt/wg/bin/wg --debug',
      });
      const s = parse(['--config', config]);
      expect(s).to.deep.include({
        run: 'daemon',
        mode: 'write-rendered',
        controllerUrl: 'http://control.test:8080/control/v1',
        stateDir: '/srv/dn42',
        logLevel: 'debug',
        birdKernel: false,
        reconcileIntervalSeconds: 60,
        routingIntervalSeconds: 20,
      });
      expect(s.commands.wg).to.deep.equal(['/opt/wg/bin/wg', '--debug']);
      expect(s.commands.birdc).to.deep.equal(['birdc', '-s', '/tmp/b.ctl']);
      const overridden = parse(['--config', config, '--state-dir', '/other', '--mode', 'apply', '--controller-url', 'http://x']);
      expect(overridden).to.deep.include({ stateDir: '/other', mode: 'apply', controllerUrl: 'http://x/control/v1' });
      expect(parse(['--config', config, '--once', '--desired-state', 'x.json']).controllerUrl).to.equal(null);
    });

    it('reads JSON files with a commands object', async () => {
      const path = join(dir.path, 'agent.json');
      await writeFile(
        path,
        JSON.stringify({ controller_url: 'http://c', bird_socket: '/run/b.ctl', commands: { birdc: ['/usr/local/sbin/birdc'], ip: '/sbin/ip' } }),
      );
      const s = parse(['--config', path]);
      expect(s.commands.birdc).to.deep.equal(['/usr/local/sbin/birdc', '-s', '/run/b.ctl']);
      expect(s.commands.ip).to.deep.equal(['/sbin/ip']);
    });

    it('names the bad key of a config file', async () => {
      const bad = async (text: string) => {
        await writeFile(join(dir.path, 'bad.conf'), text);
        try {
          parse(['--doctor', '--config', join(dir.path, 'bad.conf')]);
        } catch (err) {
          expect(err).to.be.instanceOf(UsageError);
          return (err as Error).message;
        }
        throw new Error('no error');
      };
      expect(await bad('colour = blue\n')).to.match(/unknown key colour$/);
      expect(await bad('mode = sometimes\n')).to.match(/mode must be one of apply, write-rendered, plan-only$/);
      expect(await bad('heartbeat_interval_seconds = 0\n')).to.match(/heartbeat_interval_seconds must be a whole number of seconds/);
      expect(await bad('command.curl = curl\n')).to.match(/unknown key command.curl$/);
      expect(await bad('just words\n')).to.match(/line 1: expected key = value$/);
      expect(await bad('{"mode": ')).to.match(/invalid JSON/);
      expect(await bad('wireguard_implementation = both\n')).to.match(/wireguard_implementation must be one of auto, kernel, userspace$/);
    });

    it('takes wireguard_implementation from the command line over the environment over the file (default auto), and command.wireguard_go', async () => {
      const withEnv = (args: string[], env: Record<string, string>) => parseCommandLine(args, '1.0.5', () => {}, env) as AgentSettings;
      expect(parse(['--doctor']).wireguardImplementation).to.equal('auto');
      expect(parse(['--doctor']).commands.wireguard_go).to.deep.equal(['wireguard-go']);
      expect(parse(['--doctor']).wireguardSocketDir).to.equal('/var/run/wireguard');
      const file = await writeAgentConfig(join(dir.path, 'wg.conf'), {
        wireguard_implementation: 'kernel',
        'command.wireguard_go': '/opt/wg/wireguard-go',
        wireguard_socket_dir: '/run/wg-test',
      });
      const fromFile = withEnv(['--doctor', '--config', file], {});
      expect(fromFile).to.deep.include({ wireguardImplementation: 'kernel', wireguardSocketDir: '/run/wg-test' });
      expect(fromFile.commands.wireguard_go).to.deep.equal(['/opt/wg/wireguard-go']);
      expect(withEnv(['--doctor', '--config', file], { DN42_AGENT_WIREGUARD_IMPLEMENTATION: 'userspace' }).wireguardImplementation).to.equal('userspace');
      expect(
        withEnv(['--doctor', '--config', file, '--wireguard-implementation', 'auto'], { DN42_AGENT_WIREGUARD_IMPLEMENTATION: 'userspace' })
          .wireguardImplementation,
      ).to.equal('auto');
      expect(() => withEnv(['--doctor'], { DN42_AGENT_WIREGUARD_IMPLEMENTATION: 'bogus' })).to.throw(
        UsageError,
        'invalid DN42_AGENT_WIREGUARD_IMPLEMENTATION bogus: one of auto, kernel, userspace',
      );
      expect(() => parse(['--doctor', '--wireguard-implementation', 'bogus'])).to.throw(UsageError, /bogus/);
    });
  });
});
