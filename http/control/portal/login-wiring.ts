import type { Logger } from '../../../infra/logger.js';
import { PortalRelyingParty } from '../../../infra/portal/relying-party.js';
import { portalLogin, sessionIssuer, type LocalPortalClient } from '../../../infra/portal/settings.js';
import type { Config } from '../../../infra/config.js';
import { HttpError } from '../../shared/errors.js';

/** What the portal's login routes work with: the relying party, or why there is none. */
export interface PortalLoginWiring {
  rp: PortalRelyingParty | undefined;
  /** Names of the missing settings (empty when configured). */
  missing: string[];
  /** Verifies `/autopeering/session` JWTs; undefined: 503. */
  sessionIssuer: string | undefined;
}

export function portalLoginWiring(config: Config, log: Logger, local?: LocalPortalClient): PortalLoginWiring {
  const login = portalLogin(config, local);
  return {
    rp: login.configured ? new PortalRelyingParty(login.settings, log) : undefined,
    missing: login.configured ? [] : login.missing,
    sessionIssuer: sessionIssuer(config, local !== undefined),
  };
}

export const loginNotConfigured = (missing: readonly string[]) => `portal login is not configured (missing: ${missing.join(', ')})`;
export const IDENTITY_UNAVAILABLE = 'identity service unavailable; retry later';

/** The relying party, or the 503 of an incomplete login configuration. */
export function relyingParty(wiring: PortalLoginWiring): PortalRelyingParty {
  if (!wiring.rp) throw new HttpError(503, loginNotConfigured(wiring.missing));
  return wiring.rp;
}
