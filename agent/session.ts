import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AgentSettings } from './cli.js';
import { desiredSource, readDesiredFile, type Desired } from './desired.js';
import { enroll } from './enroll.js';
import { callControl } from './http.js';
import { inventory } from './inventory.js';
import { Reconciler } from './reconcile.js';
import { generateWireguardPrivateKey, rpkiModeOf } from './render/index.js';
import { readHeldRoas, refreshRoas } from './rpki/held.js';
import type { AgentRuntime } from './runtime.js';
import { AppliedStore } from './state/applied.js';
import { stateLayout } from './state/layout.js';
import { TokenKeeper } from './token.js';
import { agentVersion } from './version.js';
import { nodeWireguardKey, registerWireguardKey } from './wireguard-key.js';
import { WireguardDevices } from './wireguard/devices.js';

/** Everything a run needs once the node is known: the runtime (null offline) and its reconciler. */
export interface AgentSession {
  nodeId: string;
  renderedDir: string;
  rt: AgentRuntime | null;
  reconciler: Reconciler;
  applied: AppliedStore;
  /** The WireGuard devices of an apply (kernel or supervised `wireguard-go`); null in the other modes. */
  devices: WireguardDevices | null;
  /** The node's WireGuard private key (from the state dir, or a throwaway one for a plan without a stored key). */
  privateKey: string;
  /**
   * After the server refused the agent token `refused` (at `where`: `pull`,
   * `socket`): true when another token is in use now (see `TokenKeeper`);
   * always false offline.
   */
  renewToken(refused: string, where: string): Promise<boolean>;
}

/**
 * Sets up a run: enrolls with the controller (or reads the offline document),
 * loads the applied state and the node's WireGuard key. A plan (`plan-only`)
 * writes nothing locally: without a stored key it renders with a throwaway one.
 */
export async function openSession(settings: AgentSettings, log: Logger, signal?: AbortSignal): Promise<AgentSession> {
  const layout = stateLayout(settings.stateDir);
  let nodeId: string;
  let keeper: TokenKeeper | null = null;
  let offline: Desired | null = null;
  // An apply makes WireGuard devices: the implementation is resolved before the registration, which names it.
  const devices = settings.mode === 'apply' ? wireguardDevices(settings, log) : null;
  const wireguard = devices ? (await devices.resolve()).kind : null;
  if (settings.controllerUrl) {
    const registration = {
      apiBase: settings.controllerUrl,
      layout,
      enrollmentToken: settings.enrollmentToken,
      inventory: inventory(settings.commands, settings.hostname, wireguard),
      log,
    };
    const enrollment = await enroll({ ...registration, requestedNodeId: settings.requestedNodeId, signal, once: settings.run === 'once' });
    nodeId = enrollment.node_id;
    keeper = new TokenKeeper(enrollment.token, { ...registration, nodeId });
  } else {
    offline = await readDesiredFile(settings.desiredStatePath!);
    nodeId = offline.state.node.node_id;
  }
  const node = layout.node(nodeId);
  const renderedDir = settings.renderedDir ?? node.rendered;
  const applied = new AppliedStore(node.applied);
  await applied.load();
  const privateKey = settings.mode === 'plan-only' ? await storedKeyOr(node.wireguardKey) : await nodeWireguardKey(node.wireguardKey);
  const rt = keeper === null ? null : runtimeOf(settings, { nodeId, renderedDir, keeper, applied, log, devices });
  const source = rt ? desiredSource(rt) : async () => offline;
  const reconciler = new Reconciler({
    nodeId,
    stateDir: settings.stateDir,
    renderedDir,
    node,
    applied,
    commands: settings.commands,
    birdConfig: settings.birdConfig,
    birdKernel: settings.birdKernel,
    privateKey,
    log,
    source,
    rt,
    devices: devices ?? undefined,
    roas: async (state) => {
      if (rpkiModeOf(state) === 'off') return null;
      // plan-only changes nothing on the node, the held ROA set included.
      const held = rt && settings.mode !== 'plan-only' ? (await refreshRoas(rt, node.roas)).held : await readHeldRoas(node.roas, log);
      return held?.set ?? null;
    },
  });
  const renewToken = async (refused: string, where: string) => (keeper ? keeper.renew(refused, where) : false);
  return { nodeId, renderedDir, rt, reconciler, applied, privateKey, renewToken, devices };
}

function wireguardDevices(settings: AgentSettings, log: Logger): WireguardDevices {
  return new WireguardDevices({
    setting: settings.wireguardImplementation,
    commands: settings.commands,
    socketDir: settings.wireguardSocketDir,
    processDir: join(settings.stateDir, 'wireguard-go'),
    log,
  });
}

async function storedKeyOr(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return generateWireguardPrivateKey();
  }
}

function runtimeOf(
  settings: AgentSettings,
  s: { nodeId: string; renderedDir: string; keeper: TokenKeeper; applied: AppliedStore; log: Logger; devices: WireguardDevices | null },
): AgentRuntime {
  const apiBase = settings.controllerUrl!;
  return {
    controllerUrl: apiBase,
    nodeId: s.nodeId,
    stateDir: settings.stateDir,
    renderedDir: s.renderedDir,
    version: agentVersion(),
    logger: s.log,
    commands: settings.commands,
    request: (method, path, body, headers) => callControl(apiBase, method, path, body, s.keeper.token(), headers),
    agentToken: () => s.keeper.token(),
    applied: () => s.applied.current(),
    ...(s.devices ? { wireguard: s.devices } : {}),
  };
}

/**
 * Registers the node's public key (and escrow); true once the server answered
 * (stored, matched, or rejected: that one needs an operator and is logged as an
 * error). An unreachable server is logged and the next reconcile tries again.
 */
export async function ensureKeyRegistered(session: AgentSession): Promise<boolean> {
  if (!session.rt) return true;
  try {
    await registerWireguardKey(session.rt, session.privateKey);
    return true;
  } catch (err) {
    session.rt.logger.warn({ err }, 'wireguard key not registered yet');
    return false;
  }
}
