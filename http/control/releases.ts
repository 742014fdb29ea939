import { Type } from '@sinclair/typebox';
import { releaseStatus, setTarget, uploadRelease } from '../../commands/releases.js';
import { Validation } from '../../domain/errors.js';
import { readReleaseUpload, UploadTooLarge } from '../../infra/releases/multipart.js';
import type { ServiceContext } from '../shared/context.js';
import { HttpError } from '../shared/errors.js';
import { ApiRouter } from '../shared/routes.js';
import { ManifestSchema, ReleaseStatusSchema, TargetSet } from './release-schemas.js';

const TAGS = ['agent releases'];

/** Agent releases: upload (multipart), the global target, and the fleet's versions. */
export function releaseRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  const common = { security: ['admin'], tags: TAGS };
  r.route({
    ...common,
    method: 'post',
    path: '/admin/agent-releases',
    summary:
      'upload a release: multipart/form-data with a `version` field (x.y.z) and `files` parts (*.whl or *.tgz); replaces an earlier upload of the version; does not roll out',
    responses: { 201: ManifestSchema, 413: 'upload beyond the size limits', 422: 'invalid version, file name or upload' },
    handler: async (req, res) => {
      const upload = await readReleaseUpload(req).catch((err) => {
        throw err instanceof UploadTooLarge ? new HttpError(413, err.message) : err;
      });
      if (upload.version === undefined)
        throw new Validation('invalid version: the version field is required', [{ loc: ['body', 'version'], msg: 'required', type: 'required' }]);
      res.status(201).json(await uploadRelease(ctx, upload.version, upload.files));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/agent-releases/target',
    summary: 'set the global target version; connected agents below it are offered the update',
    // No length limit: `setTarget` answers any bad version with `invalid version: …` (the body limit bounds it).
    body: Type.Object({ version: Type.String() }, { additionalProperties: false }),
    responses: { 200: TargetSet, 422: 'invalid version, not uploaded, or below the current target' },
    handler: async (req, res) => {
      res.json(await setTarget(ctx, req.body.version));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/agent-releases',
    summary: 'releases status: target, uploaded versions, every node with its agent version and liveness',
    responses: { 200: ReleaseStatusSchema },
    handler: async (_req, res) => {
      res.json(await releaseStatus(ctx));
    },
  });
  return r;
}
