import { NotFound } from '../../domain/errors.js';
import * as q from '../../infra/registry/queries.js';
import type { ServiceContext } from '../shared/context.js';
import { throwIt } from '../shared/errors.js';
import { ApiRouter } from '../shared/routes.js';
import { AsnMntners, AsnParams, AutNum, Identity, Names, NamesBody, Options, Routes } from './schemas.js';

const unknownAsn = (asn: number) => new NotFound(`AS${asn} not found in the registry`);

/** `POST /names` and `/asns/{asn}/...`. */
export function asnRoutes(ctx: ServiceContext, prefix: string): ApiRouter {
  const { pool } = ctx;
  return new ApiRouter(prefix)
    .route({
      method: 'post',
      path: '/names',
      summary: 'as-names of up to 1000 ASNs',
      security: ['service'],
      body: NamesBody,
      responses: { 200: Names, 422: 'more than 1000 ASNs or an invalid one' },
      handler: async (req, res) => {
        res.json({ names: await q.names(pool, req.body.asns) });
      },
    })
    .route({
      method: 'get',
      path: '/asns/{asn}',
      summary: 'ASN record',
      security: ['service'],
      params: AsnParams,
      responses: { 200: AutNum, 404: 'unknown ASN' },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        res.json((await q.inSnapshot(pool, (db) => q.autNum(db, asn))) ?? throwIt(unknownAsn(asn)));
      },
    })
    .route({
      method: 'get',
      path: '/asns/{asn}/mntners',
      summary: 'Maintainers of the ASN',
      security: ['service'],
      params: AsnParams,
      responses: { 200: AsnMntners, 404: 'unknown ASN' },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        const mntners = (await q.inSnapshot(pool, (db) => q.asnMntners(db, asn))) ?? throwIt(unknownAsn(asn));
        res.json({ asn, mntners });
      },
    })
    .route({
      method: 'get',
      path: '/asns/{asn}/verification-options',
      summary: 'email, pgp and ssh options with their source maintainer',
      security: ['service'],
      params: AsnParams,
      responses: { 200: Options, 404: 'unknown ASN' },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        res.json((await q.inSnapshot(pool, (db) => q.options(db, asn))) ?? throwIt(unknownAsn(asn)));
      },
    })
    .route({
      method: 'get',
      path: '/asns/{asn}/routes',
      summary: 'route and route6 prefixes the ASN originates (unknown ASN: empty lists)',
      security: ['service'],
      params: AsnParams,
      responses: { 200: Routes },
      handler: async (req, res) => {
        res.json(await q.routes(pool, Number(req.params.asn)));
      },
    })
    .route({
      method: 'get',
      path: '/asns/{asn}/identity',
      summary: 'Claim enrichment data; each field falls back to null or empty',
      security: ['service'],
      params: AsnParams,
      responses: { 200: Identity },
      handler: async (req, res) => {
        const asn = Number(req.params.asn);
        res.json(await q.inSnapshot(pool, (db) => q.identity(db, asn)));
      },
    });
}
