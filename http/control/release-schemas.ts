import { Type } from '@sinclair/typebox';
import type { ReleaseStatus } from '../../commands/releases.js';
import type { ReleaseManifest } from '../../domain/release/manifest.js';
import { component, type Describes } from '../shared/routes.js';

/** The bodies of the agent release routes (document 2, "Other records"), shared by the admin and the agent side. */

export const ManifestSchema = component(
  'ReleaseManifest',
  Type.Object(
    {
      version: Type.String({ description: 'agent version' }),
      wheels: Type.Array(
        Type.Object({
          filename: Type.String({ description: 'file name, fetched from `/agent/update/wheels/{version}/{filename}`' }),
          sha256: Type.String({ description: 'hex SHA-256 of the file' }),
          size: Type.Integer({ minimum: 0, description: 'size in bytes' }),
        }),
        { description: 'the release files' },
      ),
    },
    { description: 'agent release manifest' },
  ),
);

export const TargetSet = Type.Object(
  {
    target: Type.String({ description: 'the new global target version' }),
    offered: Type.Array(Type.String(), { description: 'nodes the doorbell offered the update to' }),
  },
  { description: 'target set' },
);

export const ReleaseStatusSchema = Type.Object(
  {
    target: Type.Union([Type.String(), Type.Null()], { description: 'the global target version, or null' }),
    versions: Type.Array(Type.String(), { description: 'uploaded versions, numeric order' }),
    nodes: Type.Array(
      component(
        'ReleaseNode',
        Type.Object({
          node_id: Type.String({ description: 'the node' }),
          agent_version: Type.Union([Type.String(), Type.Null()], { description: 'the version the agent reported, null before its first heartbeat' }),
          applied_generation: Type.Union([Type.Integer(), Type.Null()], { description: 'the generation the agent last applied' }),
          apply_status: Type.Union([Type.String(), Type.Null()], { description: 'status of its last apply' }),
          last_seen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'its last heartbeat' }),
          up_to_date: Type.Boolean({ description: 'the node version equals the target' }),
          liveness: Type.Union([Type.Literal('online'), Type.Literal('stale'), Type.Literal('offline')], { description: 'by heartbeat freshness' }),
        }),
      ),
      { description: 'every node of the fleet or of the liveness registry, by node id' },
    ),
  },
  { description: 'releases status' },
);

export const checked: [
  Describes<typeof ManifestSchema, ReleaseManifest>,
  Describes<typeof ReleaseStatusSchema, ReleaseStatus>,
  Describes<typeof TargetSet, { target: string; offered: string[] }>,
] = [true, true, true];
