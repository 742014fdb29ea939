import { unreachable, type Decider, type DomainEvent } from '../decider.js';
import { NotFound } from '../errors.js';

/**
 * What an agent tells about its host when it registers (the contract's `inventory`).
 */
export interface Inventory {
  hostname: string;
  os: string;
  arch: string;
  has_systemd: boolean;
  capabilities: string[];
}

export type RegistrationStatus = 'pending' | 'approved' | 'rejected';

/**
 * The registration of one requested node id, in `registration-<node_id>`: one
 * record per node, so approval and rejection are decisions about the node, and an
 * agent that retries (or is reinstalled) updates the same record.
 */
export type RegistrationRequested = DomainEvent<
  'RegistrationRequested',
  {
    registration_id: string;
    node_id: string;
    inventory: Inventory;
    /** `bootstrap` (the global token) or `enrollment-token` (a table token, `enrollment_token_id`). */
    via: 'bootstrap' | 'enrollment-token';
    enrollment_token_id: string | null;
    client_address: string | null;
    at: string;
  }
>;
/** `by` is the administrator, or `enrollment-token <id>` when a node-bound token pre-approved the node. */
export type RegistrationApproved = DomainEvent<
  'RegistrationApproved',
  { registration_id: string; node_id: string; note: string | null; by: string; at: string }
>;
export type RegistrationRejected = DomainEvent<
  'RegistrationRejected',
  { registration_id: string; node_id: string; note: string | null; by: string; at: string }
>;
/** The register call that issued an agent token. */
export type RegistrationAccepted = DomainEvent<
  'RegistrationAccepted',
  { registration_id: string; node_id: string; agent_id: string; token_id: string; enrollment_token_id: string | null; generation: number; at: string }
>;

export type RegistrationEvent = RegistrationRequested | RegistrationApproved | RegistrationRejected | RegistrationAccepted;
export const REGISTRATION_EVENT_TYPES: readonly RegistrationEvent['type'][] = [
  'RegistrationRequested',
  'RegistrationApproved',
  'RegistrationRejected',
  'RegistrationAccepted',
];

export const registrationStream = (nodeId: string): string => `registration-${nodeId}`;

/** A repeated request with the same inventory is recorded at most this often (agents retry every few seconds). */
export const REQUEST_RECORD_INTERVAL_MS = 5 * 60_000;

export type RegistrationState =
  { status: 'Empty' } | { status: RegistrationStatus; registration_id: string; node_id: string; inventory: Inventory | null; last_recorded_at: string | null };

export function evolveRegistration(state: RegistrationState, event: RegistrationEvent): RegistrationState {
  const base =
    state.status === 'Empty'
      ? {
          status: 'pending' as RegistrationStatus,
          registration_id: event.data.registration_id,
          node_id: event.data.node_id,
          inventory: null,
          last_recorded_at: null,
        }
      : state;
  switch (event.type) {
    case 'RegistrationRequested':
      return { ...base, inventory: event.data.inventory, last_recorded_at: event.data.at };
    case 'RegistrationApproved':
      return { ...base, status: 'approved' };
    case 'RegistrationRejected':
      return { ...base, status: 'rejected' };
    case 'RegistrationAccepted':
      return base;
    default:
      return unreachable(event);
  }
}

export type RegistrationCommand =
  | ({ type: 'RecordRequest'; registration_id: string } & Omit<RegistrationRequested['data'], 'registration_id' | 'at'> & { now: Date })
  | { type: 'Approve' | 'Reject'; registration_id: string; note: string | null; by: string; now: Date }
  | { type: 'PreApprove'; enrollment_token_id: string; now: Date }
  | { type: 'Accept'; agent_id: string; token_id: string; enrollment_token_id: string | null; generation: number; now: Date };

/**
 * Approve and reject apply in any state (the contract's "any"): an administrator
 * may reverse either decision, and repeating one records the new note.
 */
export function decideRegistration(command: RegistrationCommand, state: RegistrationState): RegistrationEvent[] {
  const at = command.now.toISOString();
  switch (command.type) {
    case 'RecordRequest': {
      const { type: _type, now, ...data } = command;
      if (state.status !== 'Empty' && !worthRecording(state, command.inventory, now)) return [];
      const registration_id = state.status === 'Empty' ? command.registration_id : state.registration_id;
      return [{ type: 'RegistrationRequested', data: { ...data, registration_id, at } }];
    }
    case 'Approve':
    case 'Reject': {
      if (state.status === 'Empty' || state.registration_id !== command.registration_id) throw new NotFound(`unknown registration ${command.registration_id}`);
      const data = { registration_id: state.registration_id, node_id: state.node_id, note: command.note, by: command.by, at };
      return [command.type === 'Approve' ? { type: 'RegistrationApproved', data } : { type: 'RegistrationRejected', data }];
    }
    case 'PreApprove': {
      if (state.status === 'Empty') throw new Error('PreApprove needs a recorded request first');
      if (state.status !== 'pending') return [];
      return [
        {
          type: 'RegistrationApproved',
          data: { registration_id: state.registration_id, node_id: state.node_id, note: null, by: `enrollment-token ${command.enrollment_token_id}`, at },
        },
      ];
    }
    case 'Accept': {
      if (state.status === 'Empty') throw new Error('Accept needs a recorded request first');
      const { agent_id, token_id, enrollment_token_id, generation } = command;
      return [
        {
          type: 'RegistrationAccepted',
          data: { registration_id: state.registration_id, node_id: state.node_id, agent_id, token_id, enrollment_token_id, generation, at },
        },
      ];
    }
    default:
      return unreachable(command);
  }
}

function worthRecording(state: Exclude<RegistrationState, { status: 'Empty' }>, inventory: Inventory, now: Date): boolean {
  if (!state.inventory || !sameInventory(state.inventory, inventory)) return true;
  return state.last_recorded_at === null || now.getTime() - Date.parse(state.last_recorded_at) >= REQUEST_RECORD_INTERVAL_MS;
}

/** Field by field: the recorded inventory comes back from jsonb with its keys in another order. */
function sameInventory(a: Inventory, b: Inventory): boolean {
  return (
    a.hostname === b.hostname &&
    a.os === b.os &&
    a.arch === b.arch &&
    a.has_systemd === b.has_systemd &&
    a.capabilities.length === b.capabilities.length &&
    a.capabilities.every((c, i) => c === b.capabilities[i])
  );
}

export const registrationDecider: Decider<RegistrationCommand, RegistrationEvent, RegistrationState> = {
  initialState: () => ({ status: 'Empty' }),
  evolve: evolveRegistration,
  decide: decideRegistration,
};
