import { Type } from '@sinclair/typebox';
import { NotFound, Validation } from '../../../domain/errors.js';
import { registryClient, RegistryRefused, RegistryUnavailable, type RegistryClient } from '../../../infra/registry/client.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError, throwIt } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { Mntner, Options, SyncResult } from '../../registry/schemas.js';

const MAX_NAMES = 200;
const AsnParams = Type.Object({ asn: Type.Integer({ minimum: 0, maximum: 4294967295 }) });
const NullableString = Type.Union([Type.String(), Type.Null()]);

/**
 * `/control/v1/ui/registry/*`: the console's thin passthrough to the registry
 * replica (admin Bearer, checked by the `/ui` guard). Explicit queries answer 503
 * when the replica is not configured or does not answer; `names` is enrichment
 * and falls back to the placeholder `AS<asn>`.
 */
export function registryProxyRoutes(ctx: ServiceContext, client: RegistryClient = registryClient(ctx.config, ctx.log)): ApiRouter {
  const unknownAsn = (asn: number) => new NotFound(`AS${asn} not found in the registry`);
  return new ApiRouter('/control/v1')
    .route({
      method: 'get',
      path: '/ui/registry/status',
      summary: 'Replica status (enabled false when no replica is configured)',
      tags: ['registry'],
      security: ['admin'],
      responses: {
        200: Type.Object({ enabled: Type.Boolean(), commit: NullableString, asn_count: Type.Integer(), synced_at: NullableString }),
        503: 'replica unreachable',
      },
      handler: async (_req, res) => {
        if (!client.configured) return res.json({ enabled: false, commit: null, asn_count: 0, synced_at: null });
        const s = await client.status();
        res.json({ enabled: s.enabled, commit: s.commit, asn_count: s.asn_count, synced_at: s.synced_at });
      },
    })
    .route({
      method: 'post',
      path: '/ui/registry/sync',
      summary: 'Manual sync; force=1 skips the commit check',
      tags: ['registry'],
      security: ['admin'],
      query: Type.Object({ force: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')])) }),
      responses: { 200: SyncResult, 409: 'no upstream token, or a sync already running', 502: 'upstream failure, data kept', 503: 'replica unavailable' },
      handler: async (req, res) => {
        try {
          res.json(await client.sync(req.validQuery.force === '1' || req.validQuery.force === 'true'));
        } catch (err) {
          if (err instanceof RegistryRefused) throw new HttpError(err.status, err.detail);
          throw err;
        }
      },
    })
    .route({
      method: 'get',
      path: '/ui/registry/names',
      summary: 'as-names of comma-separated ASNs (deduplicated in order, the first 200)',
      tags: ['registry'],
      security: ['admin'],
      query: Type.Object({ asns: Type.String({ description: 'comma-separated ASNs, `AS` prefix optional' }) }),
      responses: { 200: Type.Object({ names: Type.Record(Type.String(), Type.String()) }), 422: 'missing parameter or an invalid ASN' },
      handler: async (req, res) => {
        const asns = parseAsnList(req.validQuery.asns).slice(0, MAX_NAMES);
        let names: Map<number, string>;
        try {
          names = await client.lookupNames(asns);
        } catch (err) {
          if (!(err instanceof RegistryUnavailable)) throw err;
          names = new Map(asns.map((asn) => [asn, `AS${asn}`]));
        }
        res.json({ names: Object.fromEntries([...names].map(([asn, name]) => [String(asn), name])) });
      },
    })
    .route({
      method: 'get',
      path: '/ui/registry/asn/{asn}',
      summary: 'ASN summary',
      tags: ['registry'],
      security: ['admin'],
      params: AsnParams,
      responses: {
        200: Type.Object({ asn: Type.Integer(), as_name: NullableString, mnt_by: Type.Array(Type.String()), updated_at: Type.String() }),
        404: 'unknown ASN',
        503: 'replica unavailable',
      },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        const record = await client.asn(asn);
        if (!record) throw unknownAsn(asn);
        res.json({ asn: record.asn, as_name: record.as_name, mnt_by: record.mnt_by, updated_at: record.updated_at });
      },
    })
    .route({
      method: 'get',
      path: '/ui/registry/asn/{asn}/verification-options',
      summary: 'Verification methods of the ASN with their source maintainer',
      tags: ['registry'],
      security: ['admin'],
      params: AsnParams,
      responses: { 200: Options, 404: 'unknown ASN', 503: 'replica unavailable' },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        res.json((await client.verificationOptions(asn)) ?? throwIt(unknownAsn(asn)));
      },
    })
    .route({
      method: 'get',
      path: '/ui/registry/mntner/{name}',
      summary: 'Maintainer record',
      tags: ['registry'],
      security: ['admin'],
      params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }),
      responses: { 200: Mntner, 404: 'unknown maintainer', 503: 'replica unavailable' },
      handler: async (req, res) => {
        const name = req.params.name.toUpperCase();
        res.json((await client.mntner(name)) ?? throwIt(new NotFound(`maintainer ${name} not found in the registry`)));
      },
    });
}

/** `4242420001,AS4242420002,...` deduplicated in order; anything else is a 422. */
export function parseAsnList(text: string): number[] {
  const out = new Set<number>();
  const tokens = text.split(',').map((t) => t.trim());
  tokens.forEach((token, i) => {
    const match = /^(?:AS)?(\d{1,10})$/i.exec(token);
    const asn = match ? Number(match[1]) : NaN;
    if (!match || asn > 4294967295) {
      throw new Validation('invalid ASN list', [{ loc: ['query', 'asns', i], msg: `not an ASN: ${JSON.stringify(token)}`, type: 'pattern' }]);
    }
    out.add(asn);
  });
  return [...out];
}
