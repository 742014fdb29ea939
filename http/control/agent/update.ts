import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { checkFileName, checkVersion } from '../../../domain/release/rules.js';
import { manifestOf, releaseFile, targetVersion } from '../../../infra/releases/store.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ManifestSchema } from '../release-schemas.js';
import { requireAgent } from './auth.js';

/** Agent self-update: the target's manifest and its files, served from PostgreSQL by every instance. */
export function agentUpdateRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  r.router.use('/agent/update', requireAgent(ctx));
  const common = { security: ['agent'], tags: ['agent'] };
  r.route({
    ...common,
    method: 'get',
    path: '/agent/update/manifest',
    summary: 'manifest of the global target version; 204 without a target or manifest',
    responses: { 200: ManifestSchema, 204: 'no update available' },
    handler: async (_req, res) => {
      const target = await targetVersion(ctx.pool);
      const manifest = target ? await manifestOf(ctx.pool, target) : undefined;
      if (!manifest) res.status(204).end();
      else res.json(manifest);
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/agent/update/wheels/{version}/{filename}',
    summary: 'one release file as application/octet-stream (version and name checked by allow-list)',
    // No length limits here: the allow-lists below answer every bad value with the same `invalid …` detail.
    params: Type.Object({ version: Type.String(), filename: Type.String() }),
    responses: {
      200: { mediaType: 'application/octet-stream', schema: Type.String({ contentEncoding: 'binary' }), description: 'the file' },
      404: 'no such file',
      422: 'invalid version or file name',
    },
    handler: async (req, res) => {
      const { version, filename } = req.params;
      checkVersion(version, ['path', 'version']);
      checkFileName(filename, ['path', 'filename']);
      const content = await releaseFile(ctx.pool, version, filename);
      if (!content) throw new NotFound(`unknown release file ${version}/${filename}`);
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
      res.send(content);
    },
  });
  return r;
}
