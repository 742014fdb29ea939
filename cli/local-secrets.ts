import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { dataDirOf, PROJECT_ROOT, type Config } from '../infra/config.js';

/**
 * Zero-configuration development start. On a loopback-only `BIND_HOST`, the
 * server makes once what a first hour needs and keeps it in
 * `DATA_DIR/local-secrets.json` (0600): one admin token (for the control
 * server's `/admin`, `/ui` and `/auth` and the identity service's
 * administration) and a proof-of-work captcha secret (the control login then
 * uses `pow`); and, with no `REGISTRY_SOURCE`, the replica serves the made-up
 * sample registry `examples/registry`. Every explicit setting wins. Any other
 * `BIND_HOST` gets none of this: what is not configured stays locked (fails
 * closed). The identity signing-key secret already has its own loopback
 * fallback (infra/identity/keys.ts).
 */

export const LOCAL_SECRETS_FILE = 'local-secrets.json';
export const SAMPLE_REGISTRY = join(PROJECT_ROOT, 'examples', 'registry');

interface Stored {
  admin_token: string;
  captcha_secret: string;
  created_at: string;
}

export interface LocalSetup {
  config: Config;
  /** The file the secrets are kept in; undefined when nothing was filled in (not loopback). */
  file?: string;
  /** True when the file was made by this start (the admin token is shown once, then). */
  created: boolean;
  /** The admin token, when it came from the file. */
  adminToken?: string;
  /** What was filled in, by variable name (for the log). */
  filled: string[];
}

/** 127.0.0.0/8, ::1 and localhost: the only addresses a zero-configuration start may listen on. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

export function withLocalSecrets(config: Config): LocalSetup {
  if (!isLoopback(config.bindHost)) return { config, created: false, filled: [] };
  const dir = dataDirOf(config);
  const file = resolve(dir, LOCAL_SECRETS_FILE);
  let stored: Stored;
  let created = false;
  if (existsSync(file)) {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Stored;
    if (typeof stored.admin_token !== 'string' || typeof stored.captcha_secret !== 'string')
      throw new Error(`${file} is damaged: remove it to have new secrets made`);
  } else {
    stored = {
      admin_token: randomBytes(24).toString('base64url'),
      captcha_secret: randomBytes(32).toString('base64url'),
      created_at: new Date().toISOString(),
    };
    mkdirSync(dir, { recursive: true });
    // wx: two processes starting at once cannot both write (the second fails and is told so).
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    created = true;
  }
  const filled: string[] = [];
  const fill = <K extends keyof Config>(key: K, env: string, value: Config[K]): Config[K] => {
    if (config[key] !== undefined) return config[key];
    filled.push(env);
    return value;
  };
  const captchaSecret = fill('captchaSecret', 'CAPTCHA_SECRET', stored.captcha_secret);
  const next: Config = {
    ...config,
    adminToken: fill('adminToken', 'ADMIN_TOKEN', stored.admin_token),
    identityAdminToken: fill('identityAdminToken', 'IDENTITY_ADMIN_TOKEN', stored.admin_token),
    captchaSecret,
    controlLoginCaptcha: fill('controlLoginCaptcha', 'CONTROL_LOGIN_CAPTCHA', 'pow'),
    registrySource: fill('registrySource', 'REGISTRY_SOURCE', SAMPLE_REGISTRY),
  };
  const adminToken = next.adminToken === stored.admin_token || next.identityAdminToken === stored.admin_token ? stored.admin_token : undefined;
  return { config: next, file, created, adminToken, filled };
}

/** The once-only note of a first start: the token and how to send it. */
export function firstStartNote(setup: LocalSetup, controlUrl: string, identityUrl: string): string {
  const token = setup.adminToken;
  if (!token) return '';
  return [
    '',
    '  dn42-control: first start on a loopback address, secrets made and kept in',
    `  ${setup.file} (shown this once)`,
    '',
    `  admin token: ${token}`,
    '',
    '  Send it as  Authorization: Bearer <token>  to the control server and the',
    '  identity service administration, or give it to the management commands:',
    '',
    `    curl -H 'Authorization: Bearer ${token}' ${controlUrl}/control/v1/admin/nodes`,
    `    export DN42_TOKEN=${token} DN42_CONTROL_URL=${controlUrl} DN42_IDENTITY_URL=${identityUrl}`,
    '    dn42-control nodes list',
    '',
  ].join('\n');
}
