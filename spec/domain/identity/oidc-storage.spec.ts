import { expect } from 'chai';
import { NotFound } from '../../../domain/errors.js';
import { AlreadyConsumed, decideConsume, evolveOidcModel, type OidcModelEvent, type OidcModelState } from '../../../domain/identity/oidc-storage.js';

const now = new Date('2026-11-01T12:00:00Z');
const stored: OidcModelEvent = {
  type: 'OidcModelStored',
  data: {
    model: 'AuthorizationCode',
    key: 'k',
    payload: { grantId: 'g' },
    expires_at: null,
    grant_id: 'g',
    client_id: 'c',
    uid_key: null,
    user_code_key: null,
  },
};
const fold = (events: OidcModelEvent[]): OidcModelState => events.reduce(evolveOidcModel, { status: 'Empty' } as OidcModelState);

describe('OIDC model stream: consumption', () => {
  it('consumes a stored instance once', () => {
    expect(decideConsume(fold([stored]), 'AuthorizationCode', 'k', now)).to.deep.equal([
      { type: 'OidcModelConsumed', data: { model: 'AuthorizationCode', key: 'k', at: now.toISOString() } },
    ]);
  });

  it('refuses a second consumption', () => {
    const consumed = fold([stored, ...decideConsume(fold([stored]), 'AuthorizationCode', 'k', now)]);
    expect(() => decideConsume(consumed, 'AuthorizationCode', 'k', now)).to.throw(AlreadyConsumed, 'AuthorizationCode already consumed');
  });

  it('counts a payload stored as consumed as consumed', () => {
    const again: OidcModelEvent = { ...stored, data: { ...stored.data, payload: { consumed: 1795362477 } } } as OidcModelEvent;
    expect(() => decideConsume(fold([again]), 'RefreshToken', 'k', now)).to.throw(AlreadyConsumed);
  });

  it('finds nothing to consume before it is stored or after it is revoked or destroyed', () => {
    expect(() => decideConsume(fold([]), 'AuthorizationCode', 'k', now)).to.throw(NotFound);
    for (const type of ['OidcModelRevoked', 'OidcModelDestroyed'] as const) {
      const gone = fold([stored, { type, data: { model: 'AuthorizationCode', key: 'k', at: now.toISOString(), reason: 'grant' } } as OidcModelEvent]);
      expect(() => decideConsume(gone, 'AuthorizationCode', 'k', now)).to.throw(NotFound);
    }
  });
});
