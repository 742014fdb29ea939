import { isDeepStrictEqual } from 'node:util';
import type { FleetContext } from '../domain/desired-state/context.js';
import { materialise } from '../domain/desired-state/materialise.js';
import { MATERIALIZATION_FAILED, validateDesiredState, validDnsSection, type DesiredState } from '../domain/desired-state/schema.js';
import { dnsStateOf } from '../domain/dns/desired-state.js';
import type { ActiveDnsGroup } from '../domain/dns/state.js';
import { Validation } from '../domain/errors.js';
import { takesRpki } from '../domain/fleet-ops/agent-gate.js';
import type { LiveNode } from '../domain/node/state.js';

/**
 * A document as a publishing write gives it: validated (422
 * `MATERIALIZATION_FAILED` when it fails), and without `bird.rpki` for an agent
 * that predates it. Validation fills absent defaults in place, `bird.rpki`
 * included; such an agent refuses any document with it, a given one too (a
 * rollback to a generation from before it, a decommission, a provision).
 */
export function checkedDocument(state: object, agentVersion: string | null | undefined): Record<string, unknown> {
  const check = validateDesiredState(state);
  if (!check.ok) throw new Validation(MATERIALIZATION_FAILED, check.errors);
  if (!takesRpki(agentVersion)) delete (state as { bird?: { rpki?: unknown } }).bird?.rpki;
  return state as Record<string, unknown>;
}

/** A checked document and its JSON text (`JSON.stringify(state)`). */
export interface Materialised {
  state: Record<string, unknown>;
  text: string;
}

type Sections = Omit<DesiredState, 'dns'>;
type Facts = Omit<FleetContext, 'dns_group'>;

interface LastDocument {
  node: LiveNode;
  facts: Facts;
  sections: Sections;
  /** `JSON.stringify(sections)` without its closing brace. */
  open: string;
}

/**
 * Each node's last materialised document but its `dns` section, checked, with
 * what it was made from: the node state (the folded object itself: states are
 * never changed in place, so the same object is the same node) and the facts of
 * its context. Bounded like the fold caches: the least recently made are
 * forgotten first.
 */
const lastDocuments = new Map<string, LastDocument>();
const KEPT_DOCUMENTS = 2000;

/** Each DNS group state's `dns` section, built, checked and serialised once for all its members. */
const dnsSections = new WeakMap<ActiveDnsGroup, { dns: DesiredState['dns']; ok: boolean; text: string }>();

/**
 * `materialise(node, ctx)` as `checkedDocument` leaves it, with its text. A
 * node materialised again from the same state and the same facts (a write to
 * its DNS group: only the group changed) gets its last document's other
 * sections again, which the same pure function would make byte for byte, and
 * the group's `dns` section, made once for all its members: a write to a group
 * of 1,000 members materialised, validated and serialised 1,000 whole documents
 * (bench fleet-scale).
 */
export function materialised(node: LiveNode, ctx: FleetContext): Materialised {
  const { dns_group, ...facts } = ctx;
  const last = lastDocuments.get(node.node_id);
  lastDocuments.delete(node.node_id);
  if (last && last.node === node && isDeepStrictEqual(last.facts, facts)) {
    const dns = dnsSectionOf(dns_group);
    if (dns.ok) {
      remember(node, last);
      return { state: { ...last.sections, dns: dns.dns }, text: `${last.open},"dns":${dns.text}}` };
    }
  }
  const state = checkedDocument(materialise(node, ctx), ctx.agent_version) as unknown as DesiredState;
  const { dns, ...sections } = state;
  const open = JSON.stringify(sections).slice(0, -1);
  remember(node, { node, facts, sections, open });
  return { state: state as unknown as Record<string, unknown>, text: `${open},"dns":${JSON.stringify(dns)}}` };
}

function remember(node: LiveNode, entry: LastDocument): void {
  lastDocuments.set(node.node_id, entry);
  if (lastDocuments.size > KEPT_DOCUMENTS) lastDocuments.delete(lastDocuments.keys().next().value!);
}

/** The group's `dns` section, whether it passes the schema, and its text. */
function dnsSectionOf(group: ActiveDnsGroup | null | undefined): { dns: DesiredState['dns']; ok: boolean; text: string } {
  if (!group) return { dns: null, ok: true, text: 'null' };
  let known = dnsSections.get(group);
  if (!known) {
    const dns = dnsStateOf(group);
    const ok = validDnsSection(dns);
    known = { dns, ok, text: JSON.stringify(dns) };
    dnsSections.set(group, known);
  }
  return known;
}
