import { expect } from 'chai';
import type { Decider } from '../../../domain/decider.js';
import { decidePasskeys, foldPasskeys, type PasskeyCommand } from '../../../domain/identity/passkeys-decide.js';
import { evolvePasskeys, initialPasskeys, type MaintainerEvent, type MaintainerPasskeys } from '../../../domain/identity/passkeys.js';
import { given } from '../../support/given.js';

const T0 = new Date('2026-11-01T12:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

const registered = (counter: number): MaintainerEvent => ({
  type: 'PasskeyRegistered',
  data: {
    credential_id: 'cred-1',
    public_key: 'pk',
    counter,
    transports: [],
    aaguid: '00000000-0000-0000-0000-000000000000',
    label: 'passkey',
    device_type: 'singleDevice',
    backed_up: false,
    credential: {},
    registered_at: T0.toISOString(),
  },
});
const used = (counter: number, s: number): MaintainerEvent => ({ type: 'PasskeyUsed', data: { credential_id: 'cred-1', counter, at: at(s).toISOString() } });
const use = (counter: number, s: number): PasskeyCommand => ({ type: 'RecordPasskeyUse', credentialId: 'cred-1', counter, now: at(s) });

const passkeyDecider: Decider<PasskeyCommand, MaintainerEvent, MaintainerPasskeys> = {
  initialState: initialPasskeys,
  evolve: evolvePasskeys,
  decide: decidePasskeys,
};

describe('passkey decider: signature counter', () => {
  it('records the new counter of a login', () => {
    given(passkeyDecider, [registered(5)])
      .when(use(7, 10))
      .then([used(7, 10)]);
  });

  it('never records a counter below the stored one (two logins verified against the same counter, appended out of order)', () => {
    given(passkeyDecider, [registered(5), used(7, 10)])
      .when(use(6, 11))
      .then([used(7, 11)]);
  });

  it('folds to the highest counter seen, even when the events hold a lower one later', () => {
    const state = foldPasskeys([registered(5), used(9, 10), used(6, 11)]);
    expect(state.credentials.get('cred-1')).to.include({ counter: 9, lastUsedAt: at(11).toISOString() });
  });
});
