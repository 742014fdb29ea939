import { readFileSync } from 'node:fs';

/**
 * This agent's version (`x.y.z`). Packaging and self-update write it into
 * `agent/VERSION` next to the sources, so the version always names the files
 * that actually run; `DN42_AGENT_VERSION` overrides it (tests of the update
 * offer and the health gate). Without either: `0.0.0`, below every release, so
 * a development checkout never blocks an upgrade.
 */
export function agentVersion(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DN42_AGENT_VERSION?.trim();
  if (fromEnv) return fromEnv;
  try {
    const line = readFileSync(new URL('./VERSION', import.meta.url), 'utf8').trim();
    if (/^\d+\.\d+\.\d+$/.test(line)) return line;
  } catch {
    // no VERSION file: a development checkout
  }
  return '0.0.0';
}
