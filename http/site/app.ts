import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import express, { type Express, type Request, type Response } from 'express';
import type { Config } from '../../infra/config.js';
import type { Logger } from '../../infra/logger.js';
import { asNames } from '../../infra/registry/client.js';
import { leanAccessLog } from '../shared/access-log.js';
import { countRequests, labelRoute, metricsEndpoint } from '../shared/metrics.js';
import type { ServiceMetrics } from '../../infra/metrics/service.js';
import type { Land } from '../../web/site/draw.js';
import type { PublicMap } from '../../domain/public/map.js';
import { SITE_BUILD_DIR, SITE_FILES, SITE_NOT_BUILT } from '../../web/files.js';
import { renderPage } from './render.js';
import { fetchSnapshot, readSavedSnapshot, saveSnapshot } from './snapshot.js';

/**
 * The static home site (document 3, "Home site"). Every answer is a file held in
 * memory with its compressed forms: the page, baked at start from a snapshot of
 * the public map and baked again every five minutes (never per request), and
 * the built files of `npm run build:site`. Only GET and HEAD are handled (others
 * 405); `/nodes/*` goes to the operator console, every other path to `/` (302),
 * so the site has no `/healthz`: it is ready when `/` answers 200.
 */

/** Document 3: Cache-Control per path; absent: none is sent. */
export const CACHE_CONTROL = {
  '/': 'public, max-age=300',
  '/favicon.svg': 'max-age=86400',
  '/fleet.js': 'max-age=300',
  '/world-land.geojson': 'max-age=86400',
  '/canyonlands.jpg': 'max-age=2592000',
  '/robots.txt': undefined,
  '/sitemap.xml': 'max-age=3600',
} as const;

export type SitePath = keyof typeof CACHE_CONTROL;

const ANY_ORIGIN = { 'Access-Control-Allow-Origin': '*' };

/** How often the page's snapshot is renewed: the public map's own cache time (document 2: 300 s). */
export const BAKE_EVERY_MS = 300_000;

interface Served {
  body: Buffer;
  type: string;
  etag: string;
  headers: Record<string, string>;
  gzip?: Buffer;
  br?: Buffer;
}

function served(path: SitePath, body: Buffer, type: string, headers: Record<string, string> = {}, compress = true): Served {
  const cacheControl = CACHE_CONTROL[path];
  const all: Record<string, string> = { 'X-Content-Type-Options': 'nosniff', ...headers };
  if (cacheControl) all['Cache-Control'] = cacheControl;
  const file: Served = { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, headers: all };
  if (compress) {
    // Quality 6: within a tenth of the best brotli for this text at a fiftieth of its time, so a start or a bake costs milliseconds.
    file.gzip = gzipSync(body, { level: 6 });
    file.br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  }
  return file;
}

/** The encoding to answer in: brotli, else gzip, else none, as the request accepts (a `q=0` refuses). */
function encodingFor(req: Request): 'br' | 'gzip' | undefined {
  const accepted = new Set(
    String(req.headers['accept-encoding'] ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part && !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0].trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

function send(req: Request, res: Response, file: Served): void {
  res.set(file.headers);
  res.setHeader('Content-Type', file.type);
  res.setHeader('ETag', file.etag);
  if (file.gzip) res.setHeader('Vary', 'Accept-Encoding');
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  const encoding = file.gzip ? encodingFor(req) : undefined;
  const body = encoding ? file[encoding]! : file.body;
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', String(body.length));
  // Node writes no body for HEAD; the headers are those of GET.
  res.status(200).end(body);
}

/** `/nodes/<path>` → `<console>nodes/<path>`: each segment decoded and encoded again, dot segments dropped, so the target stays under the console. */
export function consoleTarget(consoleUrl: string, path: string): string {
  const rest = path
    .slice('/nodes/'.length)
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
    .map(encodeURIComponent)
    .join('/');
  return new URL(`nodes/${rest}`, consoleUrl).href;
}

/** The console's address: `CONSOLE_URL`, else the control server's `/console/` (where the operator console is served). */
export function consoleUrlOf(config: Pick<Config, 'consoleUrl' | 'controlUrl'>): string {
  const url = config.consoleUrl ?? `${config.controlUrl.replace(/\/+$/, '')}/console/`;
  return url.endsWith('/') ? url : `${url}/`;
}

export interface SiteOptions {
  buildDir?: string;
  /** Where the bake asks for the public map; absent: `CONTROL_URL` (the address the browser uses too). */
  mapFrom?: string;
  /** How often the snapshot is renewed; 0: only at start. */
  bakeEveryMs?: number;
  /**
   * The site's metrics: its requests are counted and `GET /metrics` answers them
   * to those allowed (docs/decisions.md, Operations); to everyone else `/metrics`
   * is any other path (302 to `/`), as the contract has it.
   */
  metrics?: { service: ServiceMetrics; token: string | undefined };
}

export interface Site {
  app: Express;
  /** Renews the snapshot and bakes the page again; false when the control server gave no map (the page keeps its snapshot). */
  bake(): Promise<boolean>;
  /** The snapshot the page carries now (null: it never had one). */
  readonly snapshot: PublicMap | null;
  stop(): void;
}

/**
 * Reads the build, bakes the page (the snapshot from the control server, else
 * the last one kept in `DATA_DIR`, else none) and returns the app. Without a
 * build (`npm run build:site`) the site still starts, logs an error, and its
 * built files answer 503 with the command that makes them.
 */
export async function startSite(config: Config, log: Logger, options: SiteOptions = {}): Promise<Site> {
  const dir = options.buildDir ?? SITE_BUILD_DIR;
  const built = (name: string) =>
    readFile(join(dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      return null;
    });
  const [script, css, landText, icon, photo] = await Promise.all([
    built(SITE_FILES.script),
    built(SITE_FILES.style),
    built(SITE_FILES.land),
    built(SITE_FILES.icon),
    built(SITE_FILES.photo),
  ]);
  const siteLog = log.child({ service: 'site' });
  if (![script, css, landText, icon, photo].every(Boolean)) siteLog.error({ dir }, `${SITE_NOT_BUILT}: its files answer 503 and the page has no style or land`);
  const land = landText ? (JSON.parse(landText.toString('utf8')) as Land) : null;
  const siteUrl = config.siteUrl.replace(/\/+$/, '');
  const consoleUrl = consoleUrlOf(config);

  const files = new Map<string, Served | null>([
    // The map component and its land may be loaded by pages of other origins (the operator console): readable by any.
    ['/fleet.js', script && served('/fleet.js', script, 'text/javascript; charset=utf-8', ANY_ORIGIN)],
    ['/world-land.geojson', landText && served('/world-land.geojson', landText, 'application/geo+json', ANY_ORIGIN)],
    ['/favicon.svg', icon && served('/favicon.svg', icon, 'image/svg+xml')],
    ['/canyonlands.jpg', photo && served('/canyonlands.jpg', photo, 'image/jpeg', {}, false)],
    [
      '/robots.txt',
      served('/robots.txt', Buffer.from(`User-agent: *\nAllow: /\nDisallow: /nodes/\n\nSitemap: ${siteUrl}/sitemap.xml\n`), 'text/plain; charset=utf-8'),
    ],
  ]);

  let snapshot: PublicMap | null = null;
  let asName: string | null = null;
  const publish = async (bakedAt: Date) => {
    if (snapshot?.asn != null) {
      const names = await asNames(config, [snapshot.asn], siteLog).catch(() => null);
      // No answer from the registry: keep the name already shown.
      if (names) asName = names.get(snapshot.asn) ?? null;
    } else {
      asName = null;
    }
    const page = renderPage({ snapshot, asName, land, css: css?.toString('utf8') ?? '', controlUrl: config.controlUrl, portalUrl: config.portalUrl });
    files.set(
      '/',
      served('/', Buffer.from(page.html), 'text/html; charset=utf-8', {
        'Content-Security-Policy': page.csp,
        'Referrer-Policy': 'strict-origin-when-cross-origin',
        'X-Frame-Options': 'DENY',
      }),
    );
    const sitemap = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>${siteUrl}/</loc><lastmod>${bakedAt.toISOString().slice(0, 10)}</lastmod><changefreq>hourly</changefreq></url>\n</urlset>\n`;
    files.set('/sitemap.xml', served('/sitemap.xml', Buffer.from(sitemap), 'application/xml; charset=utf-8'));
  };

  let baking: Promise<boolean> | undefined;
  const bake = (): Promise<boolean> => {
    baking ??= (async () => {
      let fresh: PublicMap | null = null;
      try {
        fresh = await fetchSnapshot(options.mapFrom ?? config.controlUrl);
      } catch (err) {
        siteLog.warn({ err: (err as Error).message }, 'home site: no public map from the control server; the page keeps its snapshot');
      }
      if (fresh) {
        snapshot = fresh;
        await saveSnapshot(config.dataDir, fresh).catch((err) => siteLog.warn({ err }, 'home site: the snapshot could not be kept'));
      } else if (!snapshot) {
        snapshot = await readSavedSnapshot(config.dataDir);
      }
      await publish(new Date());
      return fresh !== null;
    })().finally(() => {
      baking = undefined;
    });
    return baking;
  };
  await bake();
  const every = options.bakeEveryMs ?? BAKE_EVERY_MS;
  const timer = every > 0 ? setInterval(() => void bake().catch((err) => siteLog.error({ err }, 'home site: bake failed')), every) : undefined;
  timer?.unref();

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (options.metrics) {
    app.use(countRequests(options.metrics.service));
    app.get('/metrics', metricsEndpoint(options.metrics.service, options.metrics.token, { hidden: true }));
  }
  app.use(leanAccessLog(siteLog));
  app.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', 'GET, HEAD');
    res.status(405).type('text/plain').send('method not allowed\n');
  });
  app.use((req, res) => {
    const file = files.get(req.path);
    // Route labels: the site's own paths (a fixed set) and the console redirect; the rest is `(no route)`.
    if (file !== undefined) labelRoute(res, req.path);
    else if (req.path.startsWith('/nodes/')) labelRoute(res, '/nodes/*');
    if (file) return send(req, res, file);
    if (file === null) return void res.status(503).type('text/plain').send(`${SITE_NOT_BUILT}\n`);
    if (req.path.startsWith('/nodes/')) return res.redirect(302, consoleTarget(consoleUrl, req.path));
    res.redirect(302, '/');
  });
  return {
    app,
    bake,
    get snapshot() {
      return snapshot;
    },
    stop: () => clearInterval(timer),
  };
}
