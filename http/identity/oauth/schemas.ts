import { Type } from '@sinclair/typebox';

const Text = (description: string) => Type.String({ description, maxLength: 4096 });

/** The server-normalised request (`params`): echoed by authorize-context, posted back byte for byte to approve. */
export const AuthorizationParams = Type.Object(
  {
    client_id: Text('client id'),
    redirect_uri: Text('registered redirect URI, exact'),
    response_type: Type.Literal('code', { description: 'authorization code flow only' }),
    scope: Text('space-separated; known scopes only'),
    code_challenge: Text('PKCE challenge (S256)'),
    code_challenge_method: Type.Literal('S256', { description: 'PKCE is mandatory, S256 only' }),
    state: Type.Optional(Text('echoed to the client')),
    nonce: Type.Optional(Text('echoed in the ID token')),
    resource: Type.Optional(
      Type.Array(Text('RFC 8707 resource indicator from the allow-list'), { maxItems: 20, description: 'resources the access token may be for (RFC 8707)' }),
    ),
  },
  { additionalProperties: false },
);

export const AuthorizationContext = Type.Object(
  {
    client: Type.Object({ name: Type.String({ description: 'the application name shown to the user' }) }, { description: 'the requesting application' }),
    scopes: Type.Array(
      Type.Object({ id: Type.String({ description: 'scope name' }), description: Type.String({ description: 'what the application gets with it' }) }),
      { description: 'the scopes asked for' },
    ),
    params: { ...AuthorizationParams, description: 'the server-normalised request; posted back to approve byte for byte' },
    captcha: Type.Object(
      {
        kind: Type.Union([Type.Literal('pow'), Type.Literal('external'), Type.Literal('none')], {
          description: 'which captcha the verification options ask for',
        }),
        endpoint: Type.Union([Type.String(), Type.Null()], { description: 'where the page gets a challenge (pow) or the widget (external); null for none' }),
      },
      { description: 'the captcha the page shows' },
    ),
  },
  { description: 'valid request' },
);

export const ErrorRedirect = Type.Object(
  {
    redirect_to: Type.String({ description: 'the verified redirect URI carrying the error, state and issuer' }),
    error: Type.String({ description: 'OAuth error: `invalid_scope`, `invalid_request`, `invalid_target`, ...' }),
    detail: Type.String({ description: 'what is wrong with the request' }),
  },
  { description: 'faulty request whose redirect address is verified: go to redirect_to' },
);

export const ApproveBody = Type.Object(
  { ...AuthorizationParams.properties, deny: Type.Boolean({ description: 'true: the user refused; the redirect carries error=access_denied' }) },
  { additionalProperties: false },
);

export const ApproveResult = Type.Object({ redirect_to: Type.String({ description: 'carries code and state (or the OAuth error)' }) });
