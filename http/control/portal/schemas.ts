import { Type } from '@sinclair/typebox';

export const PORTAL_TAGS = ['portal'];
/** OpenAPI security of a portal-session route. */
export const PORTAL_SECURITY = ['portal'];

export const Profile = Type.Object(
  {
    sub: Type.String({ description: "the identity service's subject (sha256 of <mntner>/<asn>)" }),
    asn: Type.Union([Type.Integer(), Type.Null()], { description: 'verified ASN; null: none (request endpoints answer 403)' }),
    mntner: Type.Union([Type.String(), Type.Null()], { description: 'maintainer the ASN was verified with' }),
    route: Type.Array(Type.String(), { description: 'IPv4 prefixes the AS originates (registry route objects)' }),
    route6: Type.Array(Type.String(), { description: 'IPv6 prefixes the AS originates (registry route6 objects)' }),
  },
  { description: 'from the cached identity-service claims' },
);

export const ExpiresAt = Type.String({ description: 'when the portal session token expires (ISO 8601)' });
