import { randomBytes, timingSafeEqual } from 'node:crypto';
import { agentTokenStream, issuedEvent } from '../domain/agent/agent-token.js';
import { enrollmentDecider, enrollmentTokenStream, usability, type EnrollmentEvent } from '../domain/agent/enrollment.js';
import {
  registrationDecider,
  registrationStream,
  type Inventory,
  type RegistrationCommand,
  type RegistrationEvent,
  type RegistrationState,
} from '../domain/agent/registration.js';
import { sha256Hex } from '../domain/sha256.js';
import { fold } from '../domain/decider.js';
import { Forbidden, NotFound, Unauthorized } from '../domain/errors.js';
import type { NodeEvent } from '../domain/node/events.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { getRegistration, type RegistrationOut } from '../projections/agents/queries.js';
import { getNode } from '../projections/fleet/queries.js';
import { newAgentToken, type AgentDeps } from './agent-tokens.js';
import type { FleetDeps } from './fleet-write.js';
import { handleCommand, type LoadedStream } from './handle.js';
import { writeNode, type NodeWriteRequest, type StreamEvents } from './node-write.js';

export const INVALID_ENROLLMENT_TOKEN = 'invalid enrollment token';
export const enrollmentMismatch = (nodeId: string) => `enrollment token is not valid for node ${nodeId}`;
export const nodeRejected = (nodeId: string) => `node ${nodeId} was rejected by an administrator`;

/** Approves or rejects a registration (any state; see domain/agent/registration.ts); 404 `unknown registration <id>`. */
export async function decideRegistration(
  deps: AgentDeps,
  registrationId: string,
  verdict: 'Approve' | 'Reject',
  input: { note: string | null; by: string; now: Date },
  metadata: EventMetadata,
): Promise<RegistrationOut> {
  const known = await getRegistration(deps.db, registrationId);
  if (!known) throw new NotFound(`unknown registration ${registrationId}`);
  await handleCommand(
    deps.store,
    registrationStream(known.node_id),
    registrationDecider,
    { type: verdict, registration_id: registrationId, ...input },
    metadata,
  );
  await deps.settle?.();
  return (await getRegistration(deps.db, registrationId))!;
}

export interface RegisterInput {
  enrollment_token: string;
  requested_node_id: string;
  inventory: Inventory;
  client_address: string | null;
  /** `BOOTSTRAP_ENROLLMENT_TOKEN`; undefined: disabled. */
  bootstrap_token: string | undefined;
  now: Date;
}

export interface RegisterResponse {
  status: 'accepted' | 'pending-approval';
  node_id: string;
  agent_id: string | null;
  agent_token: string | null;
  desired_state_generation: number | null;
  message: string;
}

/**
 * `POST /agent/register`, in this order:
 * 1. the enrollment token: the bootstrap token, or a live, unexpired, unused table
 *    token; else 401. A node-bound token for another node: 401.
 * 2. a rejected node: 403, whatever the token and whether or not it is provisioned.
 * 3. the request is recorded in the node's registration (new, changed inventory,
 *    or every 5 minutes); a node-bound table token approves it (the administrator
 *    who made a token for exactly this node has approved it).
 * 4. approved, and the node exists with a first generation: `accepted` — the table
 *    token is spent, an agent token is issued, the inventory lands on the node, all
 *    in one append. Otherwise `pending-approval`; nothing is spent, the agent retries.
 */
export async function registerAgent(deps: FleetDeps, input: RegisterInput, metadata: EventMetadata): Promise<RegisterResponse> {
  const nodeId = input.requested_node_id;
  const viaBootstrap = isBootstrap(input.enrollment_token, input.bootstrap_token);
  const enrollment = viaBootstrap ? undefined : enrollmentTokenStream(sha256Hex(input.enrollment_token));
  const regStream = registrationStream(nodeId);
  // Through the node-write pipeline (`writeNode` on `node-<id>`): the inventory lands on the node, the registration,
  // token and enrollment streams are `also` data; it publishes nothing.
  const { result } = await writeNode(
    deps,
    nodeId,
    async ({ more }): Promise<NodeWriteRequest<RegisterResponse>> => {
      let tokenId: string | null = null;
      let bound = false;
      const enrollmentState = enrollment ? fold(enrollmentDecider, (await more(enrollment)).events as EnrollmentEvent[]) : undefined;
      if (enrollmentState) {
        const usable = usability(enrollmentState, nodeId, input.now);
        if (!usable.ok) throw new Unauthorized(usable.reason === 'mismatch' ? enrollmentMismatch(nodeId) : INVALID_ENROLLMENT_TOKEN);
        tokenId = usable.token_id;
        bound = usable.bound;
      }
      const before = registrationOf(await more(regStream));
      if (before.status === 'rejected') throw new Forbidden(nodeRejected(nodeId));

      const commands: RegistrationCommand[] = [
        {
          type: 'RecordRequest',
          registration_id: before.status === 'Empty' ? `reg_${randomBytes(8).toString('hex')}` : before.registration_id,
          node_id: nodeId,
          inventory: input.inventory,
          via: viaBootstrap ? 'bootstrap' : 'enrollment-token',
          enrollment_token_id: tokenId,
          client_address: input.client_address,
          now: input.now,
        },
      ];
      if (bound) commands.push({ type: 'PreApprove', enrollment_token_id: tokenId!, now: input.now });
      let { events, state } = run(commands, before);

      // Read while the write holds the node's lock: a node deleted meanwhile waits for this write (or fails its append).
      const node = await getNode(deps.db, nodeId);
      const pending = (message: string): NodeWriteRequest<RegisterResponse> => ({
        reason: REGISTER_REASON,
        also: [{ streamId: regStream, events }],
        result: pendingResponse(nodeId, message),
      });
      if (state.status !== 'approved') return pending(`registration ${registrationIdOf(state)} of node ${nodeId} is waiting for administrator approval`);
      if (!node) return pending(`node ${nodeId} is not provisioned yet; retry later`);
      if (node.current_generation < 1) return pending(`node ${nodeId} has no published desired state yet; retry later`);

      const agentId = `agent-${randomBytes(8).toString('hex')}`;
      const fresh = newAgentToken({ agent_id: agentId, now: input.now });
      const tokenStream = agentTokenStream(fresh.parts.token_id);
      await more(tokenStream);
      ({ events, state } = run(
        [
          {
            type: 'Accept',
            agent_id: agentId,
            token_id: fresh.parts.token_id,
            enrollment_token_id: tokenId,
            generation: node.current_generation,
            now: input.now,
          },
        ],
        state,
        events,
      ));
      const inventoryReported: NodeEvent = { type: 'NodeInventoryReported', data: { node_id: nodeId, inventory: { ...input.inventory } } };
      const also: StreamEvents[] = [
        { streamId: regStream, events },
        { streamId: tokenStream, events: [issuedEvent(nodeId, fresh.parts, null)] },
      ];
      if (enrollment && enrollmentState) {
        also.push({
          streamId: enrollment,
          events: enrollmentDecider.decide(
            { type: 'UseEnrollmentToken', registration_id: registrationIdOf(state), node_id: nodeId, now: input.now },
            enrollmentState,
          ),
        });
      }
      return {
        events: [inventoryReported],
        reason: REGISTER_REASON,
        also,
        result: {
          status: 'accepted',
          node_id: nodeId,
          agent_id: agentId,
          // The full token exists only in this response; the events hold the secret's hash.
          agent_token: `${fresh.parts.token_id}.${fresh.secret}`,
          desired_state_generation: node.current_generation,
          message: `agent registered for node ${nodeId}`,
        },
      };
    },
    metadata,
  );
  return result;
}

/** The generations' reason of a registration: none are published (`NodeInventoryReported` publishes nothing). */
const REGISTER_REASON = 'agent registration';

function pendingResponse(nodeId: string, message: string): RegisterResponse {
  return { status: 'pending-approval', node_id: nodeId, agent_id: null, agent_token: null, desired_state_generation: null, message };
}

/** Constant-time comparison of digests, so the bootstrap token does not leak through timing. */
function isBootstrap(presented: string, bootstrap: string | undefined): boolean {
  if (bootstrap === undefined) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(presented), 'hex'), Buffer.from(sha256Hex(bootstrap), 'hex'));
}

function registrationOf(stream: LoadedStream | undefined): RegistrationState {
  return fold(registrationDecider, (stream?.events ?? []) as RegistrationEvent[]);
}

function registrationIdOf(state: RegistrationState): string {
  if (state.status === 'Empty') throw new Error('registration has no record yet');
  return state.registration_id;
}

/** Decides commands in order on an evolving state. */
function run(
  commands: readonly RegistrationCommand[],
  state: RegistrationState,
  events: RegistrationEvent[] = [],
): { events: RegistrationEvent[]; state: RegistrationState } {
  const all = [...events];
  for (const command of commands) {
    const fresh = registrationDecider.decide(command, state);
    state = fresh.reduce(registrationDecider.evolve, state);
    all.push(...fresh);
  }
  return { events: all, state };
}
