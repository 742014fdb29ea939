/**
 * A problem retrying cannot fix (enrollment token refused, node rejected, the
 * state directory enrolled as another node): the run ends with exit code 1 and
 * this one-line message.
 */
export class FatalError extends Error {
  override name = 'FatalError';
}

/** The run was asked to stop (SIGTERM, SIGINT) while it waited. */
export class Stopped extends Error {
  override name = 'Stopped';
  constructor() {
    super('stopped');
  }
}

/**
 * The control server refused the agent token (401: revoked, rotated, expired).
 * `token` is the one refused, so that a renewal started meanwhile is not repeated.
 */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
  constructor(
    readonly token: string,
    detail: string,
  ) {
    super(`agent token refused: ${detail}`);
  }
}

/**
 * `--once` asked once and the server answered `pending-approval` (not
 * provisioned, not approved, or no first generation yet): the run reports it
 * and exits 1 instead of waiting for an administrator; the daemon retries.
 */
export class RegistrationPending extends Error {
  override name = 'RegistrationPending';
}
