import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { expect } from 'chai';
import { createAccount } from '../../../commands/accounts.js';
import { encodeTicket } from '../../../infra/captcha/index.js';
import { argon2Hasher } from '../../../infra/passwords.js';
import { listAuditEntries, type AuditEntry } from '../../../projections/audit-log/queries.js';
import type { api } from '../../support/http.js';
import type { TestSystem } from '../../support/system.js';

export const ADMIN_TOKEN = 'control-spec-admin-token-0123456789';
export const CAPTCHA_SECRET = 'control-spec-captcha-secret-0123456789';
export const POW_ENV = { ADMIN_TOKEN, CONTROL_LOGIN_CAPTCHA: 'pow', CAPTCHA_SECRET };

type Client = ReturnType<typeof api>;

/** Fetches a challenge from the server and solves it the way the widget does. */
export async function solvedTicket(client: Client): Promise<string> {
  const res = await client.get<Challenge>('/control/v1/auth/captcha');
  expect(res.status, res.text).to.equal(200);
  const solution = await solveChallenge({ challenge: res.body, deriveKey });
  expect(solution, 'the challenge should be solvable').to.not.equal(null);
  return encodeTicket(res.body, solution!);
}

export async function loginAs(client: Client, username: string, password: string, headers: Record<string, string> = {}) {
  return client.post('/control/v1/auth/login', { username, password, captcha_token: await solvedTicket(client) }, { headers });
}

export async function addAccount(sys: TestSystem, username: string, password: string): Promise<void> {
  await createAccount({ store: sys.store, passwords: argon2Hasher() }, { username, password, now: sys.clock.now() }, { actor: 'spec' });
}

/** The audit log once every audit write of the answered requests has landed. */
export async function auditEntries(sys: TestSystem, limit = 1000): Promise<AuditEntry[]> {
  await sys.context.background.drain();
  return listAuditEntries(sys.pool, limit);
}
