import { join } from 'node:path';
import { LabError } from '../../lab/exec.js';
import { startLab, stopLab, type LabHandle, type LabOptions } from '../../lab/lab.js';
import { checkHost, kernelWireguard } from '../../lab/netns.js';
import { LAB_MARK, PROJECT_ROOT } from '../../lab/state.js';

/**
 * The lab scenarios (issue 29, part 3) each run on a fresh lab: `useLab` brings
 * one up before the suite's tests (servers, nodes with BIRD and real agents,
 * portal peers, in `dn42lab-*` namespaces) and takes it down after them.
 * Where the host cannot run a lab (not root, no network namespaces, a tool
 * missing) the suite is skipped with the lab's own reason, printed, so a skip
 * never reads as a pass. A missing `wireguard-go` is not a reason to skip: the
 * userspace case always runs, and fails when it cannot.
 */

/** The specs' state dir (a lab made by `npm run lab -- up` lives in .data/dn42lab; namespaces are machine-wide, so one lab runs at a time). */
export const SPEC_STATE_DIR = join(PROJECT_ROOT, '.data', `${LAB_MARK}-spec`);

export interface LabContext {
  /** The running lab (only inside the suite's tests). */
  readonly lab: LabHandle;
}

export interface UseLabOptions extends Omit<LabOptions, 'stateDir' | 'say'> {
  /** Why the suite cannot run here (answered by a check before the lab starts), or null to run it. */
  skipWhen?: () => Promise<string | null>;
}

const verbose = () => process.env.LAB_VERBOSE === '1';

export function useLab(options: UseLabOptions = {}): LabContext {
  let handle: LabHandle | undefined;
  const said: string[] = [];
  before(async function () {
    this.timeout(600_000);
    try {
      await checkHost();
    } catch (err) {
      if (!(err instanceof LabError)) throw err;
      skipWith(this, `no lab on this host: ${err.message}`);
    }
    const why = options.skipWhen ? await options.skipWhen() : null;
    if (why) skipWith(this, why);
    const { skipWhen: _, ...lab } = options;
    try {
      handle = await startLab({
        ...lab,
        stateDir: SPEC_STATE_DIR,
        say: (line) => {
          said.push(line);
          if (verbose()) process.stderr.write(`      lab: ${line}\n`);
        },
      });
    } catch (err) {
      // What `up` said is what one reads next (and the logs in <state>/logs).
      throw new Error(`${(err as Error).message}\n  lab progress:\n    ${said.join('\n    ')}\n  logs: ${join(SPEC_STATE_DIR, 'logs')}`, { cause: err });
    }
  });
  after(async function () {
    this.timeout(120_000);
    if (handle) await handle.down();
    else await stopLab(SPEC_STATE_DIR).catch(() => {});
  });
  return {
    get lab() {
      if (!handle) throw new Error('the lab is not up');
      return handle;
    },
  };
}

function skipWith(ctx: Mocha.Context, why: string): never {
  // Printed, so the skip says why in the run's output.
  console.log(`      skipped: ${why}`);
  ctx.skip();
}

/** Skips a kernel WireGuard suite where the kernel has no module (the userspace suite still runs). */
export async function withoutKernelWireguard(): Promise<string | null> {
  return (await kernelWireguard())
    ? null
    : 'kernel WireGuard: this kernel has no WireGuard module (ip link add ... type wireguard fails); the userspace case runs instead';
}

/** The first address of a prefix (the peers' loopbacks in the lab). */
export const firstHost = (prefix: string) => (prefix.includes(':') ? prefix.replace(/::\/\d+$/, '::1') : prefix.replace(/\.0\/\d+$/, '.1'));
