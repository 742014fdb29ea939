import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

// bigint columns (positions, counts) come back as strings unless told otherwise;
// we convert explicitly where we need them, so the default stays.

/**
 * A connection refused for the server's connection limit is tried again for the
 * pool's connection timeout (`withinMs` for a pool without one), pausing
 * `firstPauseMs`, then twice as long each time up to `longestPauseMs`.
 */
export const CONNECTION_LIMIT_RETRY = { withinMs: 10_000, firstPauseMs: 25, longestPauseMs: 500 };

/**
 * A pool whose new connection, refused because the server has no connection slot
 * left (SQLSTATE 53300: `max_connections`, or a role's `CONNECTION LIMIT`), is
 * tried again with growing pauses (`CONNECTION_LIMIT_RETRY`) instead of failing
 * the query at once: a slot frees as soon as another pool of
 * the same server (another instance, a tool, a burst that ends) lets one go.
 * Any other failure, and a refusal past the window, fails as before.
 */
class SlotWaitingPool extends pg.Pool {
  /** Refusals waited out so far (a count for tests and diagnostics). */
  refusalsWaited = 0;

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | void {
    const connected = this.connectWaitingForSlot();
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (err: Error) => callback(err, undefined, () => {}),
    );
  }

  private async connectWaitingForSlot(): Promise<pg.PoolClient> {
    const until = Date.now() + (this.options.connectionTimeoutMillis || CONNECTION_LIMIT_RETRY.withinMs);
    for (let pause = CONNECTION_LIMIT_RETRY.firstPauseMs; ; pause = Math.min(pause * 2, CONNECTION_LIMIT_RETRY.longestPauseMs)) {
      try {
        return await super.connect();
      } catch (err) {
        if ((err as { code?: unknown }).code !== '53300' || Date.now() + pause > until || this.ending) throw err;
        this.refusalsWaited++;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}

export function createPool(
  connectionString: string,
  max = 10,
  options: { applicationName?: string; connectionTimeoutMillis?: number } = {},
): pg.Pool & { readonly refusalsWaited: number } {
  const pool = new SlotWaitingPool({
    connectionString,
    max,
    application_name: options.applicationName ?? 'dn42-control',
    connectionTimeoutMillis: options.connectionTimeoutMillis,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Race: a checked-out client whose session dies between two queries (inside a
  // transaction while the code awaits something else) emits 'error' on itself,
  // where pg-pool does not listen; unhandled, it crashed the process. The next
  // query on it fails instead, and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Runs `work` in one transaction; rolls back on any error and rethrows it. */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  isolation: 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE' = 'READ COMMITTED',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN ISOLATION LEVEL ${isolation}`);
    const result = await work(client);
    // Race: a statement that failed inside `work` but whose error was caught leaves
    // the transaction aborted, and COMMIT then answers ROLLBACK without an error, so
    // work that never committed (an append, a batch, a rebuild) looked committed.
    const commit = await client.query('COMMIT');
    if (commit.command !== 'COMMIT') throw Object.assign(new Error('transaction rolled back at COMMIT: a statement in it failed'), { code: '25P02' });
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** A stable 63-bit key for pg advisory locks, derived from a name. */
export function advisoryKey(name: string): bigint {
  // FNV-1a 64, folded into the signed bigint range PostgreSQL accepts.
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(name, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, hash);
}
