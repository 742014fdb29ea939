import { Type } from '@sinclair/typebox';
import { component } from '../shared/routes.js';

/** Request and response schemas of the replica; the same objects validate and document. */

export const MAX_ASN = 4294967295;

export const AsnParams = Type.Object({ asn: Type.Integer({ minimum: 0, maximum: MAX_ASN, description: 'AS number without the AS prefix' }) });

export const ForceQuery = Type.Object({
  force: Type.Optional(
    Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')], {
      description: '1: reload even when the commit is unchanged',
    }),
  ),
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
      checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'when upstream was last asked for its commit; null when never',
      }),
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

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const Strings = (description: string) => Type.Array(Type.String(), { description });
/** Attributes every registry object of these classes carries, described once. */
const registryAttributes = {
  descr: NullableString('the descr attribute, or null'),
  mnt_by: Strings('maintainers of the object (mnt-by)'),
  admin_c: Strings('administrative contacts (admin-c, nic-hdl)'),
  tech_c: Strings('technical contacts (tech-c, nic-hdl)'),
  updated_at: Type.String({ format: 'date-time', description: 'when the commit it comes from was loaded' }),
};
const AsnField = Type.Integer({ description: 'AS number' });
const AsName = NullableString('the as-name attribute, or null');

export const AutNum = Type.Object(
  { asn: AsnField, as_name: AsName, ...registryAttributes, org: NullableString('the org attribute, or null') },
  { description: 'ASN record (aut-num)' },
);

export const Mntner = component(
  'Mntner',
  Type.Object(
    {
      mntner: Type.String({ description: 'maintainer name (upper case)' }),
      ...registryAttributes,
      auth: Strings('auth attributes: e-mail, pgp-fingerprint and ssh key lines'),
      asns: Type.Array(Type.Integer(), { description: 'aut-nums this maintainer maintains' }),
    },
    { description: 'maintainer record' },
  ),
);

export const AsnMntners = Type.Object(
  { asn: AsnField, mntners: Type.Array(Mntner, { description: 'maintainers of the AS' }) },
  { description: 'maintainers of the ASN' },
);

export const Option = component(
  'VerificationOption',
  Type.Object(
    {
      id: Type.String({ description: 'stable across syncs while the option exists' }),
      mntner: Type.String({ description: 'maintainer the option comes from' }),
      kind: Type.Union([Type.Literal('email'), Type.Literal('pgp'), Type.Literal('ssh')], {
        description: 'e-mail code, PGP clearsigned nonce or SSH signature',
      }),
      method: Type.String({ description: "method label (the auth attribute's method)" }),
      value: Type.String({ description: 'plain; the identity service masks e-mail' }),
      comment: Type.String({ description: "label (the auth attribute's comment)" }),
      hardware_key: Type.Boolean({ description: 'an sk-* SSH key' }),
    },
    { description: 'one way to prove control of the ASN' },
  ),
);

export const Options = component(
  'VerificationOptions',
  Type.Object(
    {
      asn: AsnField,
      as_name: AsName,
      mntners: Strings('maintainers of the AS'),
      options: Type.Array(Option, { description: 'every option of every maintainer' }),
    },
    { description: 'methods `email`, `pgp`, `ssh` with their source maintainer' },
  ),
);

const RouteLists = {
  route: Strings('IPv4 prefixes of route objects with this origin'),
  route6: Strings('IPv6 prefixes of route6 objects with this origin'),
};

export const Routes = Type.Object({ asn: AsnField, ...RouteLists }, { description: 'prefixes the ASN originates (unknown ASN: empty lists)' });

export const Identity = Type.Object(
  {
    asn: AsnField,
    as_name: AsName,
    mnt_by: Strings('maintainers of the AS'),
    person: NullableString('handle of the first admin-c (then tech-c) of the aut-num that is a person, or null'),
    name: NullableString("that person's name, or null"),
    email: NullableString("that person's first e-mail, or null"),
    ...RouteLists,
  },
  { description: 'claim enrichment data; missing data falls back field by field to null or empty' },
);

export const KeyCert = Type.Object(
  {
    key_cert: Type.String({ description: 'key-cert object name' }),
    fingerprint: Type.String({ description: 'the key fingerprint, 40 hex digits' }),
    method: NullableString('the method attribute (PGP), or null'),
    owner: Strings('owner attributes (user ids)'),
    mnt_by: Strings('maintainers of the object (mnt-by)'),
    armor: Type.String({ description: 'the ASCII-armoured public key' }),
  },
  { description: 'PGP public key object' },
);
