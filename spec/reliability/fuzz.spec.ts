import { expect } from 'chai';
import { createControlApp } from '../../http/control/app.js';
import { registerLocalPortalClient } from '../../http/control/portal/local-client.js';
import { createRegistryApp } from '../../http/registry/app.js';
import { issueAgentToken } from '../support/agents.js';
import { api } from '../support/http.js';
import { grantFor, REGISTRY_TOKEN, startIdentity, type IdentityFixture } from '../support/identity.js';
import { givenPortalSession } from '../support/portal.js';
import { startApp } from '../support/system.js';
import { bgp, node, wg } from '../http/control/fleet/support.js';
import { Generator, operations, prng, type FuzzRequest, type Schema } from './support/fuzz.js';

const ADMIN_TOKEN = 'fuzz-spec-admin-token-0123456789';
const IDENTITY_ADMIN = 'fuzz-spec-identity-admin-token-0123456789';
/** The seed of the run: change it to explore, keep it fixed in CI (a failure must reproduce). */
const SEED = Number(process.env.FUZZ_SEED ?? 16);
/** Requests per operation (about 137 operations in the three documents). */
const PER_OPERATION = Number(process.env.FUZZ_PER_OPERATION ?? 22);
const CONCURRENCY = 8;

/**
 * 503 answers the contract allows, by operation: none so far. An entry names the
 * operation (`METHOD template`) and the document text that allows it.
 */
const ALLOWED_503: Record<string, string> = {};

interface Finding {
  request: string;
  status: number | string;
  text: string;
}

describe('a fuzz pass over every operation of the three OpenAPI documents', function () {
  this.timeout(300_000);
  let id: IdentityFixture;
  const servers: { url: string; close(): Promise<void> }[] = [];
  const docs: { name: string; prefix: string; url: string; doc: Schema }[] = [];
  const known: Record<string, unknown> = {};
  const credentials: Record<string, string> = {};

  before(async () => {
    id = await startIdentity({ ADMIN_TOKEN, IDENTITY_ADMIN_TOKEN: IDENTITY_ADMIN, CAPTCHA_SECRET: 'fuzz-spec-captcha-secret-0123456789' });
    // The portal logs in at this identity service, as under npm start.
    const localClient = await registerLocalPortalClient(id.sys.context);
    const control = await startApp(createControlApp(id.sys.context, { portal: { localClient } }));
    const registry = await startApp(createRegistryApp(id.sys.context));
    servers.push(control, registry);
    const admin = api(`${control.url}/control/v1`, { token: ADMIN_TOKEN });
    // Things for the deep paths to find: two nodes, an interface, a BGP session, a peering, a DNS group, tokens.
    for (const n of ['fuzz1', 'fuzz2']) expect((await admin.post('/admin/nodes', node(n))).status).to.equal(201);
    const iface = await admin.post('/admin/nodes/fuzz1/interfaces', wg('dn42_peer', 51820));
    const session = await admin.post('/admin/nodes/fuzz1/bgp-sessions', bgp('peer1', 4242420002));
    const peering = await admin.post('/admin/nodes/fuzz1/peerings', { name: 'fuzzpeer', remote_asn: 4242420003 });
    const group = await admin.post('/admin/dns-groups', { name: 'fuzzgroup' });
    const enrollment = await admin.post('/admin/enrollment-tokens', {});
    const agent = await issueAgentToken(control.url, ADMIN_TOKEN, 'fuzz1');
    const session2 = await grantFor(id.sys, 'ALPHA-MNT', 4242420001);
    Object.assign(known, {
      node_id: 'fuzz1',
      iface_id: iface.body?.id ?? iface.body?.iface_id,
      session_id: session.body?.id ?? session.body?.session_id,
      peering_id: peering.body?.id ?? peering.body?.peering_id,
      group_id: group.body?.id ?? group.body?.group_id,
      token_id: agent.token_id,
      enrollment_token: enrollment.body?.token,
      asn: 4242420001,
      remote_asn: 4242420002,
      name: 'ALPHA-MNT',
      mntner: 'ALPHA-MNT',
      generation: 1,
      router_id: '172.20.0.1',
      loopback_ipv4: '172.20.0.1',
      loopback_ipv6: 'fd42:4242:1::1',
      link_local: 'fe80::1',
      neighbor_address: 'fe80::2',
    });
    for (const k of Object.keys(known)) if (known[k] === undefined) delete known[k];
    const portal = await givenPortalSession(id.sys, { asn: 4242420001, mnt: 'ALPHA-MNT' });
    Object.assign(credentials, { admin: ADMIN_TOKEN, agent: agent.token, session: session2.token, service: REGISTRY_TOKEN, portal, identity: session2.token });
    for (const [name, prefix, base] of [
      ['control', '/control/v1', control.url],
      ['identity', '/api/v1', id.url],
      ['registry', '/registry/v1', registry.url],
    ] as const) {
      const res = await fetch(`${base}${prefix}/openapi.json`);
      expect(res.status, `${name} document`).to.equal(200);
      docs.push({ name, prefix, url: base, doc: await res.json() });
    }
  });

  after(async () => {
    for (const s of servers) await s.close();
    await id?.close();
  });

  it('answers thousands of generated requests, valid and invalid, with and without credentials, without a single 5xx', async () => {
    const gen = new Generator(prng(SEED), known);
    const requests: FuzzRequest[] = [];
    for (const d of docs) {
      const ops = operations(d.doc, d.prefix);
      // Identity admin credentials are the identity service's own admin token.
      const creds = d.name === 'identity' ? { ...credentials, admin: IDENTITY_ADMIN } : credentials;
      // Destructive operations last, so the deep paths of the others still find the seeded things.
      const late = (o: (typeof ops)[number]) => (o.method === 'DELETE' || /decommission|rotate|rollback/.test(o.template) ? 1 : 0);
      ops.sort((a, b) => late(a) - late(b));
      for (const op of ops) requests.push(...gen.requests(op, d.url, creds, PER_OPERATION));
    }
    const operationCount = new Set(requests.map((r) => `${r.method} ${r.op.template}`)).size;
    expect(operationCount, 'operations covered').to.be.greaterThan(120);

    const findings: Finding[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const r = requests[next++];
        const label = `${r.method} ${r.url.slice(0, 160)} [${r.what}]`;
        try {
          const withBody = r.method !== 'GET' && r.method !== 'HEAD';
          const res = await fetch(r.url, {
            method: r.method,
            headers: r.headers,
            body: withBody ? r.body : undefined,
            redirect: 'manual',
            signal: AbortSignal.timeout(20_000),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          // An event stream answers with its headers and stays open: its status is what counts.
          const text = (res.headers.get('content-type') ?? '').includes('event-stream') ? (await res.body?.cancel(), '') : await res.text();
          const allowed = res.status === 503 && `${r.method} ${r.op.template}` in ALLOWED_503;
          if (res.status >= 500 && !allowed) findings.push({ request: label, status: res.status, text: text.slice(0, 200) });
        } catch (err) {
          findings.push({ request: label, status: 'no answer', text: String((err as Error).cause ?? err) });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (process.env.FUZZ_REPORT) (await import('node:fs')).writeFileSync(process.env.FUZZ_REPORT, JSON.stringify(findings, null, 1));
    const summary = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(`      fuzz: ${requests.length} requests over ${operationCount} operations (seed ${SEED}); ${summary}`);
    expect(findings, findings.map((f) => `${f.status} ${f.request} ${f.text}`).join('\n')).to.deep.equal([]);
    // Still serving: the pass did not take a service down.
    for (const d of docs) expect((await fetch(`${d.url}${d.prefix}/openapi.json`)).status).to.equal(200);
  });
});
