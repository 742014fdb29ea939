/**
 * Configuration: every setting, its default and its parser live in this one table.
 * `loadConfig` validates the whole environment at start; a bad value stops the
 * process with a message that names the variable (`dn42-control config` prints the
 * effective values with secrets masked).
 */

import { createPublicKey } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';

/** The project directory (where package.json is). */
export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * `DATA_DIR` as an absolute path: a relative one is taken from the project
 * directory, not the working directory, so a command run from elsewhere finds
 * the same cluster instead of creating a new one.
 */
export function dataDirOf(config: Pick<Config, 'dataDir'>): string {
  return resolve(PROJECT_ROOT, config.dataDir);
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string) => T;

interface Setting<T> {
  env: string;
  doc: string;
  parse: Parser<T>;
  fallback: T;
  secret?: boolean;
}

function setting<T>(env: string, doc: string, parse: Parser<T>, fallback: T, secret = false): Setting<T> {
  return { env, doc, parse, fallback, secret };
}

const text: Parser<string> = (raw) => raw;

function port(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new Error('must be a TCP port number (0-65535)');
  const value = Number(raw);
  if (value > 65535) throw new Error('must be a TCP port number (0-65535)');
  return value;
}

function positiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error('must be a positive integer');
  return Number(raw);
}

function nonNegativeInt(raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new Error('must be a whole number (0 or more)');
  return Number(raw);
}

function url(...protocols: string[]): Parser<string> {
  return (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new Error(`must be a URL (${protocols.join(', ')})`);
    }
    if (!protocols.includes(parsed.protocol)) throw new Error(`must use one of ${protocols.join(', ')}`);
    return raw;
  };
}

function oneOf<T extends string>(...values: T[]): Parser<T> {
  return (raw) => {
    if (!(values as string[]).includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw as T;
  };
}

/** A secret must be long enough to resist guessing; shorter values are refused at start. */
function secret(raw: string): string {
  if (raw.length < 16) throw new Error('must be at least 16 characters');
  return raw;
}

const optional = <T>(parse: Parser<T>): Parser<T | undefined> => parse;

/** A PEM public key (literal `\n` escapes allowed, for one-line environments), re-exported as SPKI PEM. */
function publicKeyPem(raw: string): string {
  if (raw.includes('PRIVATE KEY')) throw new Error('must be a public key; the private key stays offline');
  try {
    return createPublicKey(raw.replace(/\\n/g, '\n')).export({ type: 'spki', format: 'pem' }).toString();
  } catch {
    throw new Error('must be a PEM public key (-----BEGIN PUBLIC KEY-----)');
  }
}

/**
 * A comma-separated list of URLs, read item by item: each trimmed and parsed
 * (else "<item> is not <what>"), then handed with its parse to `check`, which
 * returns what to keep of it or throws.
 */
function urlList<T>(what: string, check: (value: string, parsed: URL) => T): Parser<T[]> {
  return (raw) =>
    raw.split(',').map((item) => {
      const value = item.trim();
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        throw new Error(`${value || '(empty)'} is not ${what}`);
      }
      return check(value, parsed);
    });
}

/** Absolute URIs without fragment (RFC 8707 resource indicators), compared exactly. */
const resourceUris = urlList('an absolute URI', (value, parsed) => {
  if (parsed.hash || value.includes('#')) throw new Error(`${value} must not have a fragment`);
  return value;
});

const AN_ORIGIN = 'an origin (https://host[:port])';

/** Web origins (`scheme://host[:port]`), each normalised by URL. */
const origins = urlList(AN_ORIGIN, (value, parsed) => {
  if (!['https:', 'http:'].includes(parsed.protocol) || parsed.origin !== value.replace(/\/$/, '')) throw new Error(`${value} is not ${AN_ORIGIN}`);
  return parsed.origin;
});

/**
 * Addresses and CIDR prefixes (`10.0.0.0/8`, `::1`), each checked with ipaddr.js
 * and kept in canonical `address/length` form.
 */
function cidrList(raw: string): string[] {
  return raw.split(',').map((item) => {
    const value = item.trim();
    const [address, length, extra] = value.split('/');
    const plain = ipaddr.IPv4.isValidFourPartDecimal(address) || (!address.includes('%') && ipaddr.IPv6.isValid(address));
    const ip = plain ? ipaddr.parse(address) : undefined;
    const width = ip?.kind() === 'ipv4' ? 32 : 128;
    if (!ip || extra !== undefined || (length !== undefined && (!/^\d{1,3}$/.test(length) || Number(length) > width))) {
      throw new Error(`${value || '(empty)'} is not an IP address or CIDR prefix`);
    }
    return `${ip.toString()}/${length ?? width}`;
  });
}

export const settings = {
  databaseUrl: setting('DATABASE_URL', 'PostgreSQL URL; absent: embedded PostgreSQL under DATA_DIR/pg', optional(url('postgres:', 'postgresql:')), undefined),
  databaseReadUrl: setting(
    'DATABASE_READ_URL',
    "PostgreSQL URL of a streaming replica (hot standby) of DATABASE_URL's database: the reads that tolerate lag (console views, public map and fleet, portal views) go there; writes, authentication and the answers to a client's own write stay on the primary. Absent: every read on the primary",
    optional(url('postgres:', 'postgresql:')),
    undefined,
  ),
  databaseReadMaxLagSeconds: setting(
    'DATABASE_READ_MAX_LAG',
    'seconds of replay lag the replica of DATABASE_READ_URL may have; more, or the replica unreachable: those reads fall back to the primary until it is back within bounds',
    positiveInt,
    30,
  ),
  eventStoreUrl: setting(
    'EVENTSTORE_URL',
    'KurrentDB/EventStoreDB URL (esdb:// or kurrentdb://); absent: PostgreSQL event store',
    optional(url('esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:', 'kdb:')),
    undefined,
  ),
  dataDir: setting(
    'DATA_DIR',
    'where the embedded PostgreSQL, the registry cache and the generated local secrets are kept; relative: from the project directory',
    text,
    '.data',
  ),
  bindHost: setting('BIND_HOST', 'address the HTTP services listen on', text, '127.0.0.1'),
  trustedProxies: setting(
    'TRUSTED_PROXIES',
    'comma-separated addresses or CIDR prefixes of the reverse proxies whose CF-Connecting-IP and X-Forwarded-For headers are believed; absent: none, the TCP peer is the client',
    optional(cidrList),
    undefined,
  ),
  controlPort: setting('CONTROL_PORT', 'control server port', port, 8080),
  identityPort: setting('IDENTITY_PORT', 'identity service port', port, 8081),
  registryPort: setting('REGISTRY_PORT', 'registry replica port', port, 8082),
  sitePort: setting('SITE_PORT', 'home site port', port, 8083),
  adminToken: setting('ADMIN_TOKEN', 'static admin token for /admin and /ui; absent: those routes answer 403', optional(secret), undefined, true),
  identityAdminToken: setting(
    'IDENTITY_ADMIN_TOKEN',
    'Bearer token of the identity service administration (OAuth applications, registry sync); absent: those endpoints answer 403',
    optional(secret),
    undefined,
    true,
  ),
  registryServiceToken: setting('REGISTRY_SERVICE_TOKEN', 'token sister services present to the registry replica', optional(secret), undefined, true),
  bootstrapEnrollmentToken: setting('BOOTSTRAP_ENROLLMENT_TOKEN', 'reusable global enrollment token; absent: disabled', optional(secret), undefined, true),
  identityIssuer: setting('IDENTITY_ISSUER', 'OIDC issuer URL of the identity service', url('https:', 'http:'), 'http://127.0.0.1:8081'),
  identityKeySecret: setting(
    'IDENTITY_KEY_SECRET',
    'encrypts the identity signing keys stored in PostgreSQL (AES-256-GCM), shared by all instances; absent: a fixed development secret while IDENTITY_ISSUER is a loopback address, else the identity role does not start',
    optional(secret),
    undefined,
    true,
  ),
  oidcResources: setting(
    'OIDC_RESOURCES',
    'comma-separated resource indicators (RFC 8707) a client may request as access-token audience, compared exactly; absent: none, every access token is for the issuer',
    optional(resourceUris),
    undefined,
  ),
  webauthnOrigins: setting(
    'WEBAUTHN_ORIGINS',
    'comma-separated origins allowed to run passkey ceremonies; absent: the origin of IDENTITY_ISSUER',
    optional(origins),
    undefined,
  ),
  registryUrl: setting('REGISTRY_URL', 'base URL of the registry replica for its clients', optional(url('https:', 'http:')), undefined),
  registrySource: setting('REGISTRY_SOURCE', 'git URL or local path of a dn42 registry checkout', optional(text), undefined),
  registryUpstreamToken: setting(
    'REGISTRY_UPSTREAM_TOKEN',
    'token for an http(s) REGISTRY_SOURCE that needs one (sent as basic-auth password); absent: such a source cannot sync (409)',
    optional(text),
    undefined,
    true,
  ),
  registrySyncIntervalSeconds: setting(
    'REGISTRY_SYNC_INTERVAL',
    'seconds between the periodic registry syncs of the registry role; 0: no periodic sync',
    nonNegativeInt,
    900,
  ),
  pgpKeyserverUrl: setting(
    'PGP_KEYSERVER_URL',
    'public OpenPGP key server asked for keys the registry has no key-cert of (HKP/VKS /pks/lookup; https, http, hkps or hkp); absent: no key server is asked',
    optional(url('https:', 'http:', 'hkps:', 'hkp:')),
    undefined,
  ),
  smtpUrl: setting('SMTP_URL', 'SMTP URL for outgoing mail (smtp:// or smtps://); absent: no mail sender', optional(url('smtp:', 'smtps:')), undefined, true),
  mailFrom: setting('MAIL_FROM', 'sender address of the identity service mail (verification codes)', text, 'dn42 identity <noreply@dn42.invalid>'),
  captchaWidgetUrl: setting(
    'CAPTCHA_WIDGET_URL',
    'external captcha only: script URL of the provider widget, handed to clients as captcha.endpoint',
    optional(url('https:', 'http:')),
    undefined,
  ),
  recoveryPublicKey: setting(
    'RECOVERY_PUBLIC_KEY',
    'PEM public key of the offline recovery key that agents escrow WireGuard private keys to; absent: no escrow (recovery-public-key answers configured false)',
    optional(publicKeyPem),
    undefined,
  ),
  captchaKind: setting('CAPTCHA_KIND', 'captcha provider: pow, external or none', oneOf('pow', 'external', 'none'), 'pow'),
  controlLoginCaptcha: setting(
    'CONTROL_LOGIN_CAPTCHA',
    'captcha of the control login: pow or external; absent: every login answers 400 (fails closed)',
    optional(oneOf('pow', 'external')),
    undefined,
  ),
  captchaSecret: setting(
    'CAPTCHA_SECRET',
    'HMAC key signing proof-of-work challenges, shared by all instances; absent: pow is not configured',
    optional(secret),
    undefined,
    true,
  ),
  captchaVerifyUrl: setting('CAPTCHA_VERIFY_URL', 'siteverify URL of the external captcha provider', optional(url('https:', 'http:')), undefined),
  captchaVerifySecret: setting('CAPTCHA_VERIFY_SECRET', 'secret for the external captcha siteverify call', optional(secret), undefined, true),
  accountSessionTtlSeconds: setting('ACCOUNT_SESSION_TTL_SECONDS', 'lifetime of an account session token (s)', positiveInt, 86_400),
  portalUrl: setting(
    'PORTAL_URL',
    "public URL of the autopeering portal (the login callback sends the browser to its /auth/complete); absent: CONTROL_URL's /portal/ when this process also serves the identity role, else portal login answers 503",
    optional(url('https:', 'http:')),
    undefined,
  ),
  portalOidcIssuer: setting(
    'PORTAL_OIDC_ISSUER',
    'OIDC issuer the portal logs its users in with (our identity service); it also verifies /autopeering/session JWTs against its key set; absent: IDENTITY_ISSUER when this process also serves the identity role, else portal login and /autopeering/session answer 503',
    optional(url('https:', 'http:')),
    undefined,
  ),
  portalClientId: setting(
    'PORTAL_CLIENT_ID',
    'client_id of the portal, a confidential OAuth client registered at PORTAL_OIDC_ISSUER with redirect URI CONTROL_URL/control/v1/autopeering/auth/callback; absent: registered automatically when this process also serves the identity role, else portal login answers 503',
    optional(text),
    undefined,
  ),
  portalClientSecret: setting(
    'PORTAL_CLIENT_SECRET',
    'client_secret of PORTAL_CLIENT_ID; absent with PORTAL_CLIENT_ID set: portal login answers 503',
    optional(text),
    undefined,
    true,
  ),
  controlUrl: setting('CONTROL_URL', 'public URL of the control server', url('https:', 'http:'), 'http://127.0.0.1:8080'),
  siteUrl: setting('SITE_URL', 'public URL of the home site (its sitemap and robots.txt name it)', url('https:', 'http:'), 'http://127.0.0.1:8083'),
  consoleUrl: setting(
    'CONSOLE_URL',
    "address of the operator console, where the home site sends /nodes/*; absent: CONTROL_URL's /console/",
    optional(url('https:', 'http:')),
    undefined,
  ),
  metricsToken: setting(
    'METRICS_TOKEN',
    'Bearer token of GET /metrics on the control, identity, registry and site ports; absent: /metrics answers only loopback requests that came through no proxy (no forwarding header)',
    optional(secret),
    undefined,
    true,
  ),
  logLevel: setting('LOG_LEVEL', 'pino log level', oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'), 'info'),
  logFormat: setting(
    'LOG_FORMAT',
    'log format: json (one JSON line per entry, ISO timestamps), pretty (one human line) or auto (pretty on a terminal, else json)',
    oneOf('auto', 'json', 'pretty'),
    'auto',
  ),
  flapTimeScale: setting(
    'FLAP_TIME_SCALE',
    "labs and demos only: divides the session flap half-life (document 3's 30 minutes) and the flap-alert job's 60 s interval by this factor, so a flap's rise and decay are seen in minutes; 1 (the default) in production",
    positiveInt,
    1,
  ),
  notifyWebhookAllow: setting(
    'NOTIFY_WEBHOOK_ALLOW',
    'comma-separated CIDRs notification webhooks may reach although loopback, private, link-local or dn42 (refused by default)',
    cidrList,
    [] as string[],
  ),
  notifyPollMs: setting('NOTIFY_POLL_MS', 'how often the notification deliverer looks for due notifications when nothing woke it (ms)', positiveInt, 1000),
  notifyRetryBaseMs: setting('NOTIFY_RETRY_BASE_MS', 'first retry delay of a failed notification, doubled per attempt up to an hour (ms)', positiveInt, 30_000),
  notifyPauseAfter: setting('NOTIFY_PAUSE_AFTER', 'consecutive failed deliveries after which a notification channel is paused', positiveInt, 10),
  notifyLeaseMs: setting('NOTIFY_LEASE_MS', 'how long an instance holds a notification it is sending before another may take it (ms)', positiveInt, 60_000),
  notifyTimeoutMs: setting('NOTIFY_TIMEOUT_MS', 'deadline of one webhook request or mail submission (ms)', positiveInt, 10_000),
  notifyFloodLimit: setting('NOTIFY_FLOOD_LIMIT', 'notifications to one channel per minute before the rest of the minute becomes one summary', positiveInt, 20),
  projectionPollMs: setting('PROJECTION_POLL_MS', 'how often async projections poll when no NOTIFY arrives (ms)', positiveInt, 1000),
} as const;

type Settings = typeof settings;
export type Config = { readonly [K in keyof Settings]: Settings[K]['fallback'] | ReturnType<Settings[K]['parse']> };

/** Reads and validates every setting; the first bad value throws a ConfigError naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') {
      config[key] = s.fallback;
      continue;
    }
    try {
      config[key] = s.parse(raw.trim());
    } catch (err) {
      throw new ConfigError(s.env, (err as Error).message);
    }
  }
  const checked = config as Config;
  // A lease shorter than a request's deadline would hand a notification still being sent to another instance: sent twice.
  if (checked.notifyLeaseMs <= checked.notifyTimeoutMs)
    throw new ConfigError('NOTIFY_LEASE_MS', `must be longer than NOTIFY_TIMEOUT_MS (${checked.notifyTimeoutMs} ms)`);
  return checked;
}

/** The effective configuration as `VARIABLE=value` lines, secrets and URL passwords masked. */
export function describeConfig(config: Config): string[] {
  return (Object.entries(settings) as [keyof Config, Setting<unknown>][]).map(([key, s]) => {
    const value = config[key];
    let shown: string;
    if (value === undefined) shown = '(unset)';
    else if (s.secret) shown = '********';
    else shown = maskUrlPassword(String(value));
    return `${s.env}=${shown}`;
  });
}

function maskUrlPassword(value: string): string {
  try {
    const parsed = new URL(value);
    // libpq and node-postgres also take the password as a query parameter
    // (postgres://user@host/db?password=...): mask it there too.
    const inQuery = parsed.searchParams.has('password');
    if (parsed.password || inQuery) {
      if (parsed.password) parsed.password = '****';
      if (inQuery) parsed.searchParams.set('password', '****');
      return parsed.toString();
    }
  } catch {
    // not a URL: shown as is
  }
  return value;
}
