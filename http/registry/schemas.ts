import { Type } from '@sinclair/typebox';
import { component } from '../shared/routes.js';

/** Request and response schemas of the replica; the same objects validate and document. */

export const MAX_ASN = 4294967295;

export const AsnParams = Type.Object({ asn: Type.Integer({ minimum: 0, maximum: MAX_ASN, description: 'AS number without the AS prefix' }) });

export const ForceQuery = Type.Object({
  force: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')], { description: '1: reload even when the commit is unchanged' })),
});

export const Status = component(
  'RegistryStatus',
  Type.Object(
    {
      enabled: Type.Boolean({ description: 'REGISTRY_SOURCE is configured' }),
      commit: Type.Union([Type.String(), Type.Null()], { description: 'the registry commit loaded; null when it has never synced' }),
      previous_commit: Type.Union([Type.String(), Type.Null()], { description: 'the commit loaded before it, or null' }),
      counts: Type.Record(Type.String(), Type.Integer(), { description: 'objects per class, plus malformed' }),
      asn_count: Type.Integer({ description: 'aut-num objects loaded' }),
      synced_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the loaded commit was synced; null when never' }),
      checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when upstream was last asked for its commit; null when never' }),
      duration_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'how long the last sync took' }),
    },
    { description: 'commit, per-object counts, sync time' },
  ),
);

export const SyncResult = component(
  'RegistrySyncResult',
  Type.Object(
    {
      synced: Type.Boolean({ description: 'false: the upstream commit was already loaded (not an error)' }),
      commit: Type.String({ description: 'the commit loaded' }),
      previous_commit: Type.Union([Type.String(), Type.Null()], { description: 'the commit loaded before, or null' }),
      counts: Type.Record(Type.String(), Type.Integer(), { description: 'objects per class, plus malformed' }),
      duration_ms: Type.Integer({ description: 'how long the round took' }),
    },
    { description: 'one sync round' },
  ),
);

export const NamesBody = Type.Object(
  { asns: Type.Array(Type.Integer({ minimum: 0, maximum: MAX_ASN }), { maxItems: 1000, description: 'at most 1000; more is refused, never truncated' }) },
  { additionalProperties: false },
);

export const Names = Type.Object({ names: Type.Record(Type.String(), Type.String(), { description: 'ASN → as-name; unknown or nameless ASNs are left out' }) });

const Strings = Type.Array(Type.String());
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const AutNum = Type.Object({
  asn: Type.Integer({ description: 'AS number' }),
  as_name: Type.Union([Type.String(), Type.Null()], { description: 'the as-name attribute, or null' }),
  descr: NullableString,
  mnt_by: Strings,
  admin_c: Strings,
  tech_c: Strings,
  org: NullableString,
  updated_at: Type.String({ format: 'date-time', description: 'when the commit it comes from was loaded' }),
});

export const Mntner = component(
  'Mntner',
  Type.Object({
  mntner: Type.String({ description: 'maintainer name (upper case)' }),
  descr: NullableString,
  mnt_by: Strings,
  admin_c: Strings,
  tech_c: Strings,
  auth: Strings,
  asns: Type.Array(Type.Integer(), { description: 'aut-nums this maintainer maintains' }),
  updated_at: Type.String({ format: 'date-time', description: 'when the commit it comes from was loaded' }),
}, { description: 'maintainer record' }),
);

export const AsnMntners = Type.Object({ asn: Type.Integer(), mntners: Type.Array(Mntner) });

export const Option = component(
  'VerificationOption',
  Type.Object({
  id: Type.String({ description: 'stable across syncs while the option exists' }),
  mntner: Type.String(),
  kind: Type.Union([Type.Literal('email'), Type.Literal('pgp'), Type.Literal('ssh')]),
  method: Type.String(),
  value: Type.String({ description: 'plain; the identity service masks e-mail' }),
  comment: Type.String(),
  hardware_key: Type.Boolean({ description: 'an sk-* SSH key' }),
}, { description: 'one way to prove control of the ASN' }),
);

export const Options = component(
  'VerificationOptions',
  Type.Object({ asn: Type.Integer(), as_name: NullableString, mntners: Strings, options: Type.Array(Option) }, { description: 'methods `email`, `pgp`, `ssh` with their source maintainer' }),
);

export const Routes = Type.Object({ asn: Type.Integer(), route: Strings, route6: Strings });

export const Identity = Type.Object({
  asn: Type.Integer(),
  as_name: NullableString,
  mnt_by: Strings,
  person: NullableString,
  name: NullableString,
  email: NullableString,
  route: Strings,
  route6: Strings,
});

export const KeyCert = Type.Object({
  key_cert: Type.String(),
  fingerprint: Type.String(),
  method: NullableString,
  owner: Strings,
  mnt_by: Strings,
  armor: Type.String(),
});
