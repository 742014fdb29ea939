import { expect } from 'chai';
import { consumeModel, destroyModel, revokeGrant, storeModel, type OidcStorageDeps } from '../../../commands/identity/oidc-storage.js';
import { AlreadyConsumed, type StoredModel } from '../../../domain/identity/oidc-storage.js';
import { findModel, modelsBoundTo } from '../../../projections/oidc/queries.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

const stored = (model: string, key: string, grant = 'g1'): StoredModel => ({
  model,
  key,
  payload: { grantId: grant, clientId: 'c1', exp: 1_900_000_000 },
  expires_at: '2030-03-17T17:46:40.000Z',
  grant_id: grant,
  client_id: 'c1',
  uid_key: null,
  user_code_key: null,
});

/** The writes behind the provider's Adapter, against the real store and the inline projection. */
describe('OIDC storage commands', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  const deps = (): OidcStorageDeps => ({ store: sys.store, pool: sys.pool, now: sys.clock.now });
  const meta = { actor: 'spec' };

  before(async () => {
    sys = await createTestSystem();
  });
  after(() => sys.close());

  it('lets exactly one of many concurrent consumptions through', async () => {
    await storeModel(deps(), stored('AuthorizationCode', 'race'), meta);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => consumeModel(deps(), 'AuthorizationCode', 'race', meta)));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(AlreadyConsumed);
    const row = await findModel(sys.pool, 'AuthorizationCode', 'race');
    expect(row!.payload.consumed).to.equal(Math.floor(sys.clock.now().getTime() / 1000));
  });

  it('revokes what a grant holds, one model or all of them, in one append', async () => {
    for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode']) await storeModel(deps(), stored(model, `${model}-x`, 'g2'), meta);
    await storeModel(deps(), stored('RefreshToken', 'other-grant', 'g3'), meta);
    await revokeGrant(deps(), 'g2', meta, 'AccessToken');
    expect((await modelsBoundTo(sys.pool, { grantId: 'g2' })).map((r) => r.model)).to.deep.equal(['AuthorizationCode', 'RefreshToken']);
    const before = await sys.store.headPosition();
    await revokeGrant(deps(), 'g2', meta);
    expect(await modelsBoundTo(sys.pool, { grantId: 'g2' })).to.deep.equal([]);
    expect(await findModel(sys.pool, 'RefreshToken', 'other-grant')).to.not.equal(undefined);
    const revoked = (await sys.store.readAll(before)).filter((e) => e.type === 'OidcModelRevoked');
    expect(new Set(revoked.map((e) => e.position.tx)).size, 'one transaction').to.equal(1);
  });

  it('destroys a stored instance and writes nothing for an unknown one', async () => {
    await storeModel(deps(), stored('Grant', 'gone'), meta);
    await destroyModel(deps(), 'Grant', 'gone', meta);
    expect(await findModel(sys.pool, 'Grant', 'gone')).to.equal(undefined);
    const head = await sys.store.headPosition();
    await destroyModel(deps(), 'Grant', 'never', meta);
    expect(await sys.store.readAll(head)).to.deep.equal([]);
  });
});
