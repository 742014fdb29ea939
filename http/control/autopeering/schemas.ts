import { Type, type TSchema } from '@sinclair/typebox';
import { AutopeeringPolicySchema } from '../../../domain/autopeering/policy.js';
import { REQUEST_STATUSES } from '../../../domain/autopeering/request.js';
import { component } from '../../shared/routes.js';

/** Response shapes of the autopeering administration (OpenAPI): the rows the console names are shared components. */

const Time = (description: string) => Type.String({ format: 'date-time', description });
const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

export const PolicyRowSchema = component(
  'AutopeeringPolicyRow',
  Type.Object(
    {
      node_id: Type.String({ description: 'the node' }),
      policy: { ...AutopeeringPolicySchema, description: "the node's autopeering policy" },
      provisioned: Type.Integer({ minimum: 0, description: 'requests of the node currently provisioned through autopeering' }),
      updated_at: Nullable(Time('when the policy was set'), 'when the policy was last set; null: never set (the defaults)'),
    },
    { description: "a node's autopeering policy with its count of provisioned peers" },
  ),
);

export const RequestStatusSchema = Type.Union(
  REQUEST_STATUSES.map((s) => Type.Literal(s)),
  { description: '`provisioned` or `cancelled`' },
);

export const RequestRowSchema = component(
  'AutopeeringRequestRow',
  Type.Object(
    {
      id: Type.Integer({ description: 'request id' }),
      node_id: Type.String({ description: 'target node' }),
      asn: Type.Integer({ description: 'the AS that asked (the portal session ASN)' }),
      mntner: Nullable(Type.String(), 'maintainer of the portal session that asked; null when unknown'),
      status: RequestStatusSchema,
      form: Type.String({ description: 'session form: `link-local-mp`, `ula-mp` or `dual-plain`' }),
      peering_id: Type.Integer({ description: 'the peering the request created' }),
      cancelled_by: Type.Union([Type.Literal('requester'), Type.Literal('operator'), Type.Null()], {
        description: 'who ended the request: `requester` (self-removal) or `operator`; null while provisioned',
      }),
      reject_reason: Nullable(Type.String(), 'the reason recorded with the cancellation (`removed by operator`), or null'),
      requested: Type.Record(Type.String(), Type.Unknown(), { description: 'what the peer asked for (RequestCreateIn with defaults applied)' }),
      provision: Type.Record(Type.String(), Type.Unknown(), { description: 'what the node handed out, with the record names it created' }),
      created_at: Time('when the request was made'),
      updated_at: Time('when the request last changed'),
    },
    { description: 'an autopeering request, for audit' },
  ),
);
