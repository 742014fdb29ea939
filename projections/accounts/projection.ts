import { fileURLToPath } from 'node:url';
import type { AccountEvent } from '../../domain/account/events.js';
import type { TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';

/**
 * Accounts and sessions, inline so that a token works in the request right after
 * the login that issued it. Failure counts are not kept here: the login command
 * folds them from the account stream it reads anyway.
 */
export const accountsProjection: Projection = {
  name: 'accounts',
  mode: 'inline',
  handles: ['AccountCreated', 'LoginSucceeded', 'PasswordChanged'],
  tables: ['account_sessions', 'accounts'],
  migrations: { name: 'accounts', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, event) {
    await applyAccountEvent(tx, event.streamId.slice('account-'.length), { type: event.type, data: event.data } as AccountEvent);
  },
};

async function applyAccountEvent(tx: TransactionContext, username: string, event: AccountEvent): Promise<void> {
  switch (event.type) {
    case 'AccountCreated':
      await tx.query(`INSERT INTO accounts (username, created_at) VALUES ($1, $2)`, [event.data.username, event.data.created_at]);
      return;
    case 'LoginSucceeded':
      await tx.query(`INSERT INTO account_sessions (session_id, username, token_sha256, started_at, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
        event.data.session_id,
        username,
        event.data.token_sha256,
        event.data.at,
        event.data.expires_at,
      ]);
      return;
    case 'PasswordChanged':
      await tx.query(`UPDATE accounts SET password_changed_at = $2 WHERE username = $1`, [username, event.data.at]);
      await tx.query(`UPDATE account_sessions SET revoked_at = $2 WHERE session_id = ANY($1::text[]) AND revoked_at IS NULL`, [
        event.data.revoked_session_ids,
        event.data.at,
      ]);
      return;
    case 'LoginFailed':
    case 'LoginBlocked':
      return;
    default: {
      const _never: never = event;
      return _never;
    }
  }
}
