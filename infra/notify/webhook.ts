import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { judgeAddress, parseCidrs } from '../../domain/notify/address-policy.js';

/**
 * Outbound webhook requests that cannot be turned against our own network
 * (issue 32): the host's every address is judged before the request and again
 * by the socket's own `lookup` when it connects (a name that resolved to a
 * public address at the check and to 127.0.0.1 at connect time, DNS
 * rebinding, is refused then); redirects are not followed; the response is
 * read up to a cap and the whole exchange has a deadline.
 */
export interface WebhookPolicy {
  /** CIDRs that may be reached although private (`NOTIFY_WEBHOOK_ALLOW`). */
  allow: readonly string[];
  timeoutMs: number;
  maxResponseBytes: number;
}

export class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTarget';
  }
}

export interface WebhookResponse {
  status: number;
  /** The first bytes of the body (at most `maxResponseBytes`). */
  body: string;
}

/** A `lookup` for sockets that refuses names resolving to any address the policy refuses. */
export function guardedLookup(allow: readonly string[]): LookupFunction {
  const cidrs = parseCidrs(allow);
  return ((
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const verdict = judgeAddress(a.address, cidrs);
        if (!verdict.allowed)
          return callback(Object.assign(new RefusedTarget(`${hostname} resolves to a refused address: ${verdict.reason}`), { code: 'EREFUSED_TARGET' }), '', 0);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

/** Checks a webhook URL as it is stored: http(s), and a host whose addresses (now) are all allowed. */
export async function checkWebhookUrl(raw: string, allow: readonly string[]): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedTarget('url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedTarget('url must use http: or https:');
  if (url.username || url.password) throw new RefusedTarget('url must not carry credentials');
  const host = hostOf(url);
  if (isIP(host)) {
    const verdict = judgeAddress(host, parseCidrs(allow));
    if (!verdict.allowed) throw new RefusedTarget(`url refused: ${verdict.reason}`);
    return url;
  }
  await new Promise<void>((resolve, reject) =>
    guardedLookup(allow)(host, { all: true }, (err) => {
      if (!err) return resolve();
      reject(err instanceof RefusedTarget ? new RefusedTarget(`url refused: ${err.message}`) : new RefusedTarget(`url host ${host} does not resolve`));
    }),
  );
  return url;
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** POSTs one body; resolves with the status and the capped body, rejects on a refused target, a network error or the deadline. */
export async function postWebhook(raw: string, body: string, headers: Record<string, string>, policy: WebhookPolicy): Promise<WebhookResponse> {
  const url = new URL(raw);
  const host = hostOf(url);
  // A literal address never reaches `lookup`: judge it here.
  if (isIP(host)) {
    const verdict = judgeAddress(host, parseCidrs(policy.allow));
    if (!verdict.allowed) throw new RefusedTarget(`url refused: ${verdict.reason}`);
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<WebhookResponse>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'dn42-control-notify/1', ...headers, 'content-length': Buffer.byteLength(body) },
        lookup: guardedLookup(policy.allow),
        agent: false,
        timeout: policy.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let capped = false;
        res.on('data', (chunk: Buffer) => {
          if (capped) return;
          chunks.push(chunk.subarray(0, policy.maxResponseBytes - size));
          size += chunk.length;
          // Enough of the answer: the rest is not read (a receiver streaming forever cannot hold the deliverer).
          if (size >= policy.maxResponseBytes) {
            capped = true;
            res.destroy();
          }
        });
        const answered = () => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        };
        res.on('end', answered);
        res.on('close', () => (capped || res.complete ? answered() : fail(new Error(`the answer was cut off (deadline ${policy.timeoutMs} ms)`))));
        res.on('error', () => {});
      },
    );
    const fail = (err: Error) => {
      clearTimeout(deadline);
      reject(err);
    };
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)));
    req.on('error', fail);
    req.end(body);
  });
}
