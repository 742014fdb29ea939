import { Type } from '@sinclair/typebox';
import { NotFound, Validation } from '../../domain/errors.js';
import { normaliseFingerprint } from '../../domain/registry/auth.js';
import * as q from '../../infra/registry/queries.js';
import type { ServiceContext } from '../shared/context.js';
import { throwIt } from '../shared/errors.js';
import { ApiRouter } from '../shared/routes.js';
import { KeyCert, Mntner } from './schemas.js';

/** `/mntners/{name}` and `/key-certs/{fingerprint}`. */
export function objectRoutes(ctx: ServiceContext, prefix: string): ApiRouter {
  const { pool } = ctx;
  return new ApiRouter(prefix)
    .route({
      method: 'get',
      path: '/mntners/{name}',
      summary: 'Maintainer record (name case-insensitive)',
      security: ['service'],
      params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }),
      responses: { 200: Mntner, 404: 'unknown maintainer' },
      handler: async (req, res) => {
        const name = req.params.name.toUpperCase();
        res.json((await q.inSnapshot(pool, (db) => q.mntner(db, name))) ?? throwIt(new NotFound(`maintainer ${name} not found in the registry`)));
      },
    })
    .route({
      method: 'get',
      path: '/key-certs/{fingerprint}',
      summary: 'PGP public key by fingerprint (spaces and case do not matter)',
      security: ['service'],
      params: Type.Object({ fingerprint: Type.String({ minLength: 1, maxLength: 200 }) }),
      responses: { 200: KeyCert, 404: 'no key-cert with that fingerprint', 422: 'not a 40-digit hex fingerprint' },
      handler: async (req, res) => {
        const fingerprint = normaliseFingerprint(req.params.fingerprint);
        if (!fingerprint) {
          throw new Validation('invalid fingerprint', [{ loc: ['path', 'fingerprint'], msg: 'must be 40 hex digits (spaces allowed)', type: 'pattern' }]);
        }
        res.json((await q.keyCert(pool, fingerprint)) ?? throwIt(new NotFound(`key-cert ${fingerprint} not found in the registry`)));
      },
    });
}
