import { Type } from '@sinclair/typebox';
import { AutopeeringPolicySchema } from '../../../domain/autopeering/policy.js';
import { REQUEST_STATUSES } from '../../../domain/autopeering/request.js';

/** Response shapes of the autopeering administration (OpenAPI). */

const Time = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const PolicyRowSchema = Type.Object({
  node_id: Type.String(),
  policy: AutopeeringPolicySchema,
  provisioned: Type.Integer({ minimum: 0, description: 'requests of the node currently provisioned through autopeering' }),
  updated_at: Nullable(Time),
});

export const RequestStatusSchema = Type.Union(REQUEST_STATUSES.map((s) => Type.Literal(s)));

export const RequestRowSchema = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  asn: Type.Integer(),
  mntner: Type.Union([Type.String(), Type.Null()]),
  status: RequestStatusSchema,
  form: Type.String(),
  peering_id: Type.Integer(),
  cancelled_by: Type.Union([Type.Literal('requester'), Type.Literal('operator'), Type.Null()]),
  reject_reason: Type.Union([Type.String(), Type.Null()]),
  requested: Type.Record(Type.String(), Type.Unknown()),
  provision: Type.Record(Type.String(), Type.Unknown()),
  created_at: Time,
  updated_at: Time,
});
