import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';

/**
 * The management commands (`nodes`, `peerings`, `desired-state`,
 * `enrollment-tokens`, `oauth-clients`, `registry`): everyday administration in
 * the style of Headscale's CLI. They talk to the HTTP API only, never to the
 * database, so they work against a remote server as well as a local one. Where
 * and as whom come from flags or the environment:
 *
 * | flag | variable | default |
 * |---|---|---|
 * | `--server` | `DN42_CONTROL_URL` | `http://127.0.0.1:8080` |
 * | `--identity` | `DN42_IDENTITY_URL` | `http://127.0.0.1:8081` |
 * | `--token` | `DN42_TOKEN` | none (admin token or account session token) |
 * | `--identity-token` | `DN42_IDENTITY_TOKEN` | the `--token` value |
 *
 * `--json` prints the API's answer as JSON; without it, a short human form.
 * An answer other than 2xx prints `dn42-control: <status> <detail>` on stderr
 * and exits 1.
 */

export interface RemoteOptions {
  server: string;
  identity: string;
  token?: string;
  identityToken?: string;
  json?: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`${status} ${detail}`);
    this.name = 'ApiError';
  }
}

type Service = 'control' | 'identity';

export async function call<T = unknown>(o: RemoteOptions, service: Service, method: string, path: string, body?: unknown, open = false): Promise<T> {
  const base = (service === 'control' ? o.server : o.identity).replace(/\/+$/, '');
  const prefix = service === 'control' ? '/control/v1' : '/api/v1';
  const token = service === 'control' ? o.token : (o.identityToken ?? o.token);
  if (!token && !open) throw new Error(`no token: pass --token or set DN42_TOKEN${service === 'identity' ? ' (or DN42_IDENTITY_TOKEN)' : ''}`);
  const url = `${base}${prefix}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(320_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, { cause: err });
  }
  const text = await res.text();
  let payload: unknown = text;
  try {
    payload = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as text
  }
  if (!res.ok) {
    const detail = (payload as { detail?: unknown } | null)?.detail;
    // A 422 of the control API says `{detail: {message, errors}}`: its message is the line to print.
    const message =
      detail && typeof detail === 'object' && typeof (detail as { message?: unknown }).message === 'string'
        ? (detail as { message: string }).message
        : undefined;
    throw new ApiError(
      res.status,
      message ?? (typeof detail === 'string' ? detail : Array.isArray(detail) ? JSON.stringify(detail) : String(text || res.statusText)),
    );
  }
  return payload as T;
}

export function remote(command: Command): Command {
  return command
    .addOption(new Option('--server <url>', 'control server URL').env('DN42_CONTROL_URL').default('http://127.0.0.1:8080'))
    .addOption(new Option('--identity <url>', 'identity service URL').env('DN42_IDENTITY_URL').default('http://127.0.0.1:8081'))
    .addOption(new Option('--token <token>', 'admin token or account session token').env('DN42_TOKEN'))
    .addOption(new Option('--identity-token <token>', 'identity administration token (default: --token)').env('DN42_IDENTITY_TOKEN'))
    .option('--json', 'print JSON');
}

export const print = (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
export const json = (value: unknown) => print(JSON.stringify(value, null, 2));

/** Rows as aligned columns, with a header. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = [
    columns,
    ...rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c])))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function show(o: RemoteOptions, value: unknown, human: () => string): void {
  if (o.json) json(value);
  else print(human());
}

/** `key: value` lines of an object, nested values as JSON. */
export function fields(value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([k, v]) => `${`${k}:`.padEnd(24)}${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

export const integer = (name: string) => (raw: string) => {
  if (!/^\d+$/.test(raw)) throw new InvalidArgumentError(`${name} must be a whole number`);
  return Number(raw);
};
export const collect = (value: string, previous: string[] = []) => [...previous, value];

function readJsonFile(path: string): Record<string, unknown> {
  const text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${path}: not JSON (${(err as Error).message})`, { cause: err });
  }
}

const NODE_COLUMNS = ['node_id', 'asn', 'site', 'router_id', 'lifecycle', 'current_generation'];

/** Adds the management commands to `program`; answers them (the top-level ones). */
export function registerManagementCommands(program: Command): Command[] {
  const nodes = program.command('nodes').description('routing nodes (HTTP API)');
  remote(nodes.command('list').description('list the nodes')).action(async (_: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const rows = await call<Record<string, unknown>[]>(o, 'control', 'GET', '/admin/nodes');
    show(o, rows, () => (rows.length ? table(rows, NODE_COLUMNS) : 'no nodes'));
  });
  remote(nodes.command('show').description('one node').argument('<node_id>')).action(async (id: string, _: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const node = await call<Record<string, unknown>>(o, 'control', 'GET', `/admin/nodes/${encodeURIComponent(id)}`);
    show(o, node, () => fields(node));
  });
  remote(
    nodes
      .command('create')
      .description('create a node, from a JSON file (the POST /admin/nodes body) or flags')
      .argument('[node_id]')
      .option('-f, --file <path>', 'JSON body ("-": standard input); flags override its fields')
      .option('--asn <asn>', "the node's AS number", integer('--asn'))
      .option('--router-id <ipv4>', 'BGP router id')
      .option('--site <site>', 'site code')
      .option('--loopback-ipv4 <address>')
      .option('--loopback-ipv6 <address>')
      .option('--link-local <address>', 'IPv6 link-local address of the tunnels')
      .option('--ipv4-prefix <prefix>', 'announced IPv4 prefix (repeatable)', collect)
      .option('--ipv6-prefix <prefix>', 'announced IPv6 prefix (repeatable)', collect),
  ).action(async (id: string | undefined, opts: Record<string, unknown>, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const body: Record<string, unknown> = opts.file ? readJsonFile(String(opts.file)) : {};
    const set = (key: string, value: unknown) => value !== undefined && (body[key] = value);
    set('node_id', id);
    set('asn', opts.asn);
    set('router_id', opts.routerId);
    set('site', opts.site);
    set('loopback_ipv4', opts.loopbackIpv4);
    set('loopback_ipv6', opts.loopbackIpv6);
    set('link_local', opts.linkLocal);
    set('ipv4_prefixes', opts.ipv4Prefix);
    set('ipv6_prefixes', opts.ipv6Prefix);
    const node = await call<Record<string, unknown>>(o, 'control', 'POST', '/admin/nodes', body);
    show(o, node, () => `node ${node.node_id} created`);
  });
  remote(nodes.command('decommission').description('publish an empty desired state for a node (its rows are kept)').argument('<node_id>')).action(
    async (id: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      const node = await call<Record<string, unknown>>(o, 'control', 'POST', `/admin/nodes/${encodeURIComponent(id)}/decommission`);
      show(o, node, () => `node ${node.node_id} decommissioned (generation ${node.current_generation})`);
    },
  );

  const peerings = program.command('peerings').description('peerings of a node (HTTP API)');
  remote(peerings.command('list').description('the peerings of a node').argument('<node_id>')).action(async (id: string, _: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const rows = await call<Record<string, unknown>[]>(o, 'control', 'GET', `/admin/nodes/${encodeURIComponent(id)}/peerings`);
    show(o, rows, () => (rows.length ? table(rows, ['id', 'name', 'remote_asn', 'remote_as_name', 'enabled']) : `no peerings on ${id}`));
  });
  remote(
    peerings
      .command('provision')
      .description('create a peering with its WireGuard interface and BGP session in one generation, from a JSON file (the provision body) or flags')
      .argument('<node_id>')
      .option('-f, --file <path>', 'JSON body of POST /admin/nodes/{node_id}/peerings/provision ("-": standard input)')
      .option('--name <name>', 'peering name')
      .option('--remote-asn <asn>', "the peer's AS number", integer('--remote-asn'))
      .option('--interface <name>', 'WireGuard interface name', undefined)
      .option('--listen-port <port>', 'WireGuard listen port', integer('--listen-port'))
      .option('--peer-public-key <key>', "the peer's WireGuard public key")
      .option('--peer-endpoint <host:port>', "the peer's WireGuard endpoint")
      .option('--peer-link-local <address>', "the peer's IPv6 link-local address (also the BGP neighbor)"),
  ).action(async (id: string, opts: Record<string, string | number | undefined>, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    let body: Record<string, unknown>;
    if (opts.file) body = readJsonFile(String(opts.file));
    else {
      const missing = ['name', 'remoteAsn', 'listenPort', 'peerPublicKey', 'peerLinkLocal'].filter((k) => opts[k] === undefined);
      if (missing.length)
        throw new InvalidArgumentError(`without --file, give ${missing.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`);
      const iface = String(opts.interface ?? `dn42_${String(opts.name).slice(0, 10)}`);
      body = {
        peering: { name: opts.name, remote_asn: opts.remoteAsn },
        interface_spec: {
          name: iface,
          kind: 'wireguard',
          listen_port: opts.listenPort,
          peer: { public_key: opts.peerPublicKey, ...(opts.peerEndpoint ? { endpoint: opts.peerEndpoint } : {}) },
          peer_link_local: opts.peerLinkLocal,
        },
        bgp_spec: { name: `${opts.name}_v6`, remote_asn: opts.remoteAsn, neighbor_address: opts.peerLinkLocal, interface: iface },
      };
    }
    const made = await call<{ peering: { id: number; name: string }; generation: number }>(
      o,
      'control',
      'POST',
      `/admin/nodes/${encodeURIComponent(id)}/peerings/provision`,
      body,
    );
    show(o, made, () => `peering ${made.peering.name} (id ${made.peering.id}) provisioned on ${id}: generation ${made.generation}`);
  });

  const desired = program.command('desired-state').description('published desired states (HTTP API)');
  remote(
    desired.command('get').description('the published desired state of a node, as JSON that `dn42-agent --desired-state` reads').argument('<node_id>'),
  ).action(async (id: string, _: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    json(await call(o, 'control', 'GET', `/admin/nodes/${encodeURIComponent(id)}/desired-state`));
  });

  const enrollment = program.command('enrollment-tokens').description('enrollment tokens of node agents (HTTP API)');
  remote(
    enrollment
      .command('create')
      .description('create a one-time enrollment token (shown once)')
      .option('--node <node_id>', 'bind it to this node')
      .option('--description <text>')
      .option('--expires-at <time>', 'ISO 8601 expiry'),
  ).action(async (opts: { node?: string; description?: string; expiresAt?: string }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const body = {
      ...(opts.node ? { node_id: opts.node } : {}),
      ...(opts.description ? { description: opts.description } : {}),
      ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}),
    };
    const made = await call<Record<string, unknown>>(o, 'control', 'POST', '/admin/enrollment-tokens', body);
    show(
      o,
      made,
      () =>
        `enrollment token ${String(made.token_id ?? made.id)} created${opts.node ? ` for ${opts.node}` : ''}; it is shown this once:\n${String(made.secret)}`,
    );
  });

  const clients = program.command('oauth-clients').description('OAuth applications of the identity service (HTTP API)');
  remote(
    clients
      .command('add')
      .description('register an application; a confidential one gets its client_secret here, once')
      .requiredOption('--name <name>', 'application name')
      .requiredOption('--redirect-uri <uri>', 'redirect URI, matched exactly (repeatable)', collect)
      .option('--confidential', 'a confidential client (has a secret)'),
  ).action(async (opts: { name: string; redirectUri: string[]; confidential?: boolean }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const body = { name: opts.name, redirect_uris: opts.redirectUri, confidential: opts.confidential === true };
    const made = await call<Record<string, unknown>>(o, 'identity', 'POST', '/admin/oauth-clients', body);
    show(
      o,
      made,
      () => `client ${String(made.client_id)} registered${made.client_secret ? `; client_secret (shown this once): ${String(made.client_secret)}` : ''}`,
    );
  });
  remote(clients.command('list').description('registered applications')).action(async (_: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const answer = await call<unknown>(o, 'identity', 'GET', '/admin/oauth-clients');
    const rows = (Array.isArray(answer) ? answer : ((answer as { clients?: unknown[] }).clients ?? [])) as Record<string, unknown>[];
    show(o, answer, () => (rows.length ? table(rows, ['client_id', 'name', 'confidential', 'redirect_uris']) : 'no applications'));
  });
  remote(clients.command('remove').description('deregister an application; its tokens are revoked').argument('<client_id>')).action(
    async (id: string, _: unknown, cmd: Command) => {
      const o = cmd.opts<RemoteOptions>();
      await call(o, 'identity', 'DELETE', `/admin/oauth-clients/${encodeURIComponent(id)}`);
      show(o, { client_id: id, removed: true }, () => `client ${id} removed`);
    },
  );

  const registry = program.command('registry').description('the registry replica, through the identity service (HTTP API)');
  remote(
    registry.command('sync').description('one sync round of the replica now').option('--force', 'reload even when the upstream commit is unchanged'),
  ).action(async (opts: { force?: boolean }, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const result = await call<{ synced: boolean; commit: string; counts: Record<string, number>; duration_ms: number }>(
      o,
      'identity',
      'POST',
      `/registry/sync${opts.force ? '?force=1' : ''}`,
    );
    show(
      o,
      result,
      () =>
        `${result.synced ? 'synced' : 'unchanged'}: commit ${result.commit}, ${result.counts['aut-num'] ?? 0} aut-num, ${result.counts.mntner ?? 0} mntner (${result.duration_ms} ms)`,
    );
  });
  remote(registry.command('status').description("the replica's commit, sync time and object counts")).action(async (_: unknown, cmd: Command) => {
    const o = cmd.opts<RemoteOptions>();
    const s = await call<{ enabled: boolean; commit: string | null; synced_at: string | null; counts: Record<string, number>; detail?: string | null }>(
      o,
      'identity',
      'GET',
      '/registry/status',
      undefined,
      true,
    );
    show(o, s, () =>
      [
        `enabled:   ${s.enabled}`,
        `commit:    ${s.commit ?? '(never synced)'}`,
        `synced at: ${s.synced_at ?? '-'}`,
        `objects:   ${
          Object.entries(s.counts)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '-'
        }`,
        ...(s.detail ? [`note:      ${s.detail}`] : []),
      ].join('\n'),
    );
  });
  return [nodes, peerings, desired, enrollment, clients, registry];
}
