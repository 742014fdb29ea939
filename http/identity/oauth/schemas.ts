import { Type } from '@sinclair/typebox';

const Text = (description: string) => Type.String({ description, maxLength: 4096 });

/** The server-normalised request (`params`): echoed by authorize-context, posted back byte for byte to approve. */
export const AuthorizationParams = Type.Object(
  {
    client_id: Text('client id'),
    redirect_uri: Text('registered redirect URI, exact'),
    response_type: Type.Literal('code'),
    scope: Text('space-separated; known scopes only'),
    code_challenge: Text('PKCE challenge (S256)'),
    code_challenge_method: Type.Literal('S256'),
    state: Type.Optional(Text('echoed to the client')),
    nonce: Type.Optional(Text('echoed in the ID token')),
    resource: Type.Optional(Type.Array(Text('RFC 8707 resource indicator from the allow-list'), { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const AuthorizationContext = Type.Object(
  {
    client: Type.Object({ name: Type.String() }),
    scopes: Type.Array(Type.Object({ id: Type.String(), description: Type.String() })),
    params: AuthorizationParams,
    captcha: Type.Object({ kind: Type.Union([Type.Literal('pow'), Type.Literal('external'), Type.Literal('none')]), endpoint: Type.Union([Type.String(), Type.Null()]) }),
  },
  { description: 'valid request' },
);

export const ErrorRedirect = Type.Object(
  { redirect_to: Type.String(), error: Type.String(), detail: Type.String() },
  { description: 'faulty request whose redirect address is verified: go to redirect_to' },
);

export const ApproveBody = Type.Object(
  { ...AuthorizationParams.properties, deny: Type.Boolean({ description: 'true: the user refused; the redirect carries error=access_denied' }) },
  { additionalProperties: false },
);

export const ApproveResult = Type.Object({ redirect_to: Type.String({ description: 'carries code and state (or the OAuth error)' }) });
