import { createControlApp } from '../../../http/control/app.js';
import { ADMIN_TOKEN, node } from '../../http/control/fleet/support.js';
import { issueAgentToken } from '../agents.js';
import { api } from '../http.js';
import { createTestSystem, startApp, type TestSystem } from '../system.js';
import { generateScenario, type Scenario } from './scenarios.js';
import { scoreScenario, type ListedRow, type Localization, type ScenarioOutcome, type ScenarioScore } from './score.js';
import { simulate, type Simulation } from './simulate.js';
import { OUR_ASN } from './topology.js';

/**
 * The flap lab against a real control server: each scenario's nodes are
 * created and given agent tokens through the admin API, the simulated agents'
 * reports go through the real agent endpoints with the server clock at each
 * report's time, and at the scenario's end the lab reads
 * `GET /ui/fleet/prefix-flaps?group=prefix&min_score=0&limit=500` (and asks
 * `/localize`). Then the scenario's nodes are deleted (the views leave deleted
 * nodes out) and their prefix flap rows removed, so the next scenario starts
 * from an empty fleet without a new database.
 */

type Client = ReturnType<typeof api>;

export interface Lab {
  sys: TestSystem;
  url: string;
  admin: Client;
  close(): Promise<void>;
}

export async function startLab(): Promise<Lab> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN } });
  const started = await startApp(createControlApp(sys.context));
  return {
    sys,
    url: started.url,
    admin: api(`${started.url}/control/v1`, { token: ADMIN_TOKEN }),
    async close() {
      await started.close();
      await sys.close();
    },
  };
}

/** A request the server did not take: the lab stops (a report the real agent sends must be accepted). */
export class LabRequestFailed extends Error {}

const expectStatus = (what: string, res: { status: number; text: string }, status: number) => {
  if (res.status !== status) throw new LabRequestFailed(`${what}: ${res.status} ${res.text.slice(0, 500)}`);
};

export interface ScenarioRun {
  scenario: Scenario;
  simulation: Simulation;
  outcome: ScenarioOutcome;
  score: ScenarioScore;
  /** The grouped rows of the faulted prefixes as the server answered them. */
  faultedRows: Record<string, any>[];
  /** The view's feeds at the end. */
  feeds: { node_id: string; feed_state: string; total_changes: number | null }[];
  /** Status of `GET /ui/fleet/prefix-flaps/localize` at the end (404 before that endpoint exists). */
  localizeStatus: number;
  posts: number;
  ms: number;
}

export const nodeIdsOf = (scenario: Scenario): string[] => scenario.topology.nodes.map((_, k) => `fl${scenario.index}n${k}`);

/** Runs scenario `index` of a run seeded `seed` against the lab's server. */
export async function runScenario(lab: Lab, seed: number, index: number): Promise<ScenarioRun> {
  const began = Date.now();
  const scenario = generateScenario(seed, index);
  const ids = nodeIdsOf(scenario);
  const simulation = simulate(scenario, ids);
  lab.sys.clock.current = new Date(scenario.start - 60_000);
  const agents: Client[] = await Promise.all(
    ids.map(async (id) => {
      expectStatus(`create node ${id}`, await lab.admin.post('/admin/nodes', node(id, { asn: OUR_ASN })), 201);
      return api(`${lab.url}/control/v1`, { token: (await issueAgentToken(lab.url, ADMIN_TOKEN, id)).token });
    }),
  );
  try {
    for (const batch of batches(simulation.posts)) {
      lab.sys.clock.current = new Date(batch[batch.length - 1].at);
      await Promise.all(
        batch.map(async (post) =>
          expectStatus(
            `${post.kind} of ${ids[post.node]} at ${new Date(post.at).toISOString()}`,
            await agents[post.node].post(`/agent/${post.kind}`, post.body),
            200,
          ),
        ),
      );
    }
    lab.sys.clock.current = new Date(scenario.end);
    const res = await lab.admin.get('/ui/fleet/prefix-flaps?group=prefix&min_score=0&limit=500');
    expectStatus('prefix flaps view', res, 200);
    const localize = await lab.admin.get('/ui/fleet/prefix-flaps/localize');
    const rows = new Map<string, ListedRow>(
      (res.body.prefixes as { prefix: string; max_score: number; localization: Localization | null }[]).map((r) => [
        r.prefix,
        { prefix: r.prefix, max_score: r.max_score, localization: r.localization },
      ]),
    );
    const faulted = new Set(simulation.faulted);
    const outcome: ScenarioOutcome = {
      index,
      truth: scenario.truth,
      description: scenario.description,
      faulted: simulation.faulted,
      rows: simulation.faulted.flatMap((p) => rows.get(p) ?? []),
      noise: scenario.churn
        .filter((c) => !simulation.traces.get(c.prefix)?.fault.size && rows.has(c.prefix))
        .map((c) => ({ row: rows.get(c.prefix)!, truth: c.truth })),
    };
    return {
      scenario,
      simulation,
      outcome,
      score: scoreScenario(outcome),
      faultedRows: res.body.prefixes.filter((r: { prefix: string }) => faulted.has(r.prefix)),
      feeds: res.body.feeds,
      localizeStatus: localize.status,
      posts: simulation.posts.length,
      ms: Date.now() - began,
    };
  } finally {
    await Promise.all(ids.map(async (id) => expectStatus(`delete node ${id}`, await lab.admin.delete(`/admin/nodes/${id}`), 204)));
    await lab.sys.pool.query(`DELETE FROM prefix_flaps WHERE node_id = ANY($1)`, [ids]);
    await lab.sys.pool.query(`DELETE FROM prefix_flap_feeds WHERE node_id = ANY($1)`, [ids]);
  }
}

/** Longest span of one batch of posts sent together. */
export const BATCH_SPAN_MS = 60_000;

/**
 * The posts in batches sent concurrently: consecutive posts of different nodes
 * within BATCH_SPAN_MS, the server clock at the batch's last time (a report
 * arrives up to that much after it was taken, as over a slow link); one node's
 * posts stay in order, one batch after the other.
 */
export function batches<T extends { at: number; node: number }>(posts: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  for (const post of posts) {
    if (current.length && (post.at - current[0].at > BATCH_SPAN_MS || current.some((p) => p.node === post.node))) {
      out.push(current);
      current = [];
    }
    current.push(post);
  }
  if (current.length) out.push(current);
  return out;
}
