import { expect } from 'chai';
import { enrollmentDecider, usability, type EnrollmentEvent } from '../../../domain/agent/enrollment.js';
import { registrationDecider, type Inventory, type RegistrationEvent } from '../../../domain/agent/registration.js';
import { fold } from '../../../domain/decider.js';
import { Conflict, NotFound } from '../../../domain/errors.js';
import { given } from '../../support/given.js';

const now = new Date('2026-11-01T12:00:00Z');
const inventory: Inventory = { hostname: 'h', os: 'debian', arch: 'x86_64', has_systemd: true, capabilities: ['wireguard'] };
const requested: RegistrationEvent = {
  type: 'RegistrationRequested',
  data: { registration_id: 'reg_1', node_id: 'fra1', inventory, via: 'bootstrap', enrollment_token_id: null, client_address: null, at: now.toISOString() },
};
const request = (at: Date, inv: Inventory = inventory) =>
  ({
    type: 'RecordRequest',
    registration_id: 'reg_new',
    node_id: 'fra1',
    inventory: inv,
    via: 'bootstrap',
    enrollment_token_id: null,
    client_address: null,
    now: at,
  }) as const;
const verdict = (type: 'Approve' | 'Reject', registration_id = 'reg_1') => ({ type, registration_id, note: null, by: 'admin', now });

describe('registration decider', () => {
  it('records a first request as pending with the id the command brings', () => {
    given(registrationDecider, [])
      .when(request(now))
      .thenState((state) => {
        expect(state).to.deep.include({ status: 'pending', registration_id: 'reg_new' });
      });
  });

  it('records a repeat only after 5 minutes or with a different inventory (in any key order)', () => {
    given(registrationDecider, [requested])
      .when(request(new Date(now.getTime() + 299_999)))
      .then([]);
    const reordered = { capabilities: ['wireguard'], has_systemd: true, arch: 'x86_64', os: 'debian', hostname: 'h' };
    given(registrationDecider, [requested]).when(request(now, reordered)).then([]);
    given(registrationDecider, [requested])
      .when(request(new Date(now.getTime() + 300_000)))
      .thenState((_state, events) => expect(events.map((e) => e.type)).to.deep.equal(['RegistrationRequested']));
    given(registrationDecider, [requested])
      .when(request(now, { ...inventory, arch: 'arm64' }))
      .thenState((state, events) => {
        expect(events).to.have.length(1);
        expect(state).to.deep.include({ registration_id: 'reg_1' });
      });
  });

  it('approves and rejects from any state; an unknown id is not found', () => {
    const approved: RegistrationEvent = {
      type: 'RegistrationApproved',
      data: { registration_id: 'reg_1', node_id: 'fra1', note: null, by: 'admin', at: now.toISOString() },
    };
    const rejected: RegistrationEvent = {
      type: 'RegistrationRejected',
      data: { registration_id: 'reg_1', node_id: 'fra1', note: null, by: 'admin', at: now.toISOString() },
    };
    for (const history of [[requested], [requested, approved], [requested, rejected]]) {
      given(registrationDecider, history).when(verdict('Approve')).then([approved]);
      given(registrationDecider, history).when(verdict('Reject')).then([rejected]);
    }
    given(registrationDecider, []).when(verdict('Approve')).thenThrows(NotFound, 'unknown registration reg_1');
    given(registrationDecider, [requested]).when(verdict('Reject', 'reg_2')).thenThrows(NotFound, 'unknown registration reg_2');
  });

  it('pre-approves only a pending registration (a rejection stands)', () => {
    given(registrationDecider, [requested])
      .when({ type: 'PreApprove', enrollment_token_id: 'enr_1', now })
      .thenState((state) => expect(state.status).to.equal('approved'));
    const rejected: RegistrationEvent = {
      type: 'RegistrationRejected',
      data: { registration_id: 'reg_1', node_id: 'fra1', note: null, by: 'admin', at: now.toISOString() },
    };
    given(registrationDecider, [requested, rejected]).when({ type: 'PreApprove', enrollment_token_id: 'enr_1', now }).then([]);
  });
});

describe('enrollment token decider', () => {
  const created: EnrollmentEvent = {
    type: 'EnrollmentTokenCreated',
    data: { token_id: 'enr_1', secret_sha256: 'ab', node_id: 'fra1', description: null, expires_at: '2026-11-01T13:00:00.000Z', created_at: now.toISOString() },
  };
  const used: EnrollmentEvent = {
    type: 'EnrollmentTokenUsed',
    data: { token_id: 'enr_1', node_id: 'fra1', registration_id: 'reg_1', used_at: now.toISOString() },
  };
  const create = { type: 'CreateEnrollmentToken', token_id: 'enr_2', secret_sha256: 'ab', node_id: null, description: null, expires_at: null, now } as const;

  it('refuses a second live token with the same secret; a deleted one frees it', () => {
    given(enrollmentDecider, [created]).when(create).thenThrows(Conflict, 'enrollment token already exists');
    given(enrollmentDecider, [created, { type: 'EnrollmentTokenDeleted', data: { token_id: 'enr_1', deleted_at: now.toISOString() } }])
      .when(create)
      .thenState((state) => expect(state).to.deep.include({ status: 'Live', token_id: 'enr_2' }));
  });

  it('is usable once, before its expiry, for its bound node only', () => {
    const live = fold(enrollmentDecider, [created]);
    expect(usability(live, 'fra1', now)).to.deep.equal({ ok: true, token_id: 'enr_1', bound: true });
    expect(usability(live, 'ams1', now)).to.deep.equal({ ok: false, reason: 'mismatch' });
    expect(usability(live, 'fra1', new Date('2026-11-01T13:00:00Z'))).to.deep.equal({ ok: false, reason: 'invalid' });
    expect(usability(fold(enrollmentDecider, [created, used]), 'fra1', now)).to.deep.equal({ ok: false, reason: 'invalid' });
    given(enrollmentDecider, [created, used]).when({ type: 'UseEnrollmentToken', registration_id: 'reg_1', node_id: 'fra1', now }).thenThrows(Conflict);
  });
});
