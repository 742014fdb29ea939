import { compareVersions, isVersion } from '../release/rules.js';

/**
 * Agents before 1.0.187 validate the desired state strictly and refuse a
 * document whose `bird.blocked_prefixes` holds anything (document 2,
 * Versioning), so a whole node would stop applying because of one mitigation.
 */
export const BLOCKED_PREFIXES_MIN_AGENT = '1.0.187';

/**
 * Whether a node's document may carry its blocked prefixes, given the version
 * its agent last reported. Only a reported, readable version below 1.0.187
 * withholds them: a node whose agent never reported one (not yet installed)
 * gets them, so a fresh install of a current agent is not left unprotected.
 */
export function takesBlockedPrefixes(agentVersion: string | null | undefined): boolean {
  return atLeast(agentVersion, BLOCKED_PREFIXES_MIN_AGENT);
}

/**
 * The first agent version that knows `bird.rpki` (ROA tables, `roa_check` on
 * eBGP import). Older agents refuse a document with the field (unknown
 * fields fail their schema), so theirs leave it out.
 */
export const RPKI_MIN_AGENT = '1.0.541';

/** Whether a node's document may carry `bird.rpki`, by the same rule as `takesBlockedPrefixes`. */
export function takesRpki(agentVersion: string | null | undefined): boolean {
  return atLeast(agentVersion, RPKI_MIN_AGENT);
}

/**
 * What an agent run from a source checkout reports (`agent/version.ts`: no
 * VERSION file). It runs the code of its checkout, not an old release, so it
 * is refused no feature (a dev agent would otherwise lose `bird.rpki` and make
 * the server re-publish every node it runs on).
 */
export const DEVELOPMENT_AGENT_VERSION = '0.0.0';

/** Only a reported, readable release version below `minimum` is refused the feature. */
function atLeast(agentVersion: string | null | undefined, minimum: string): boolean {
  if (agentVersion == null || !isVersion(agentVersion) || agentVersion === DEVELOPMENT_AGENT_VERSION) return true;
  return compareVersions(agentVersion, minimum) >= 0;
}
