import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { Presence } from '../../../../infra/agent-hub/presence.js';
import { api } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { node } from '../fleet/support.js';

export const ADMIN_TOKEN = 'probes-spec-admin-token-0123456789';

/** One Server-Sent Event as the browser's EventSource would see it. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: Record<string, any>;
}

/** A real HTTP SSE reader: events in order, and how the stream ended. */
export interface SseStream {
  status: number;
  /** The JSON body when the server did not stream (errors). */
  body: any;
  events: SseEvent[];
  /** The next event not yet taken (rejects after `timeoutMs`). */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once the server ended the response. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, token = ADMIN_TOKEN, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text();
    return {
      status: res.status,
      body: text ? JSON.parse(text) : undefined,
      events,
      next: () => Promise.reject(new Error('not a stream')),
      ended: Promise.resolve(),
      close: () => {},
    };
  }
  let endedFlag = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            fields[line.slice(0, colon)] = (fields[line.slice(0, colon)] ? fields[line.slice(0, colon)] + '\n' : '') + line.slice(colon + 1).replace(/^ /, '');
          }
          if (fields.data === undefined) continue;
          events.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) });
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted by the spec
    } finally {
      endedFlag = true;
      for (const w of waiters.splice(0)) w();
    }
  })();
  return {
    status: res.status,
    body: undefined,
    events,
    ended,
    next(timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        // The bound of the wait.
        const timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms; got ${JSON.stringify(events)}`)), timeoutMs);
        const check = () => {
          if (taken < events.length) {
            clearTimeout(timer);
            resolve(events[taken++]);
          } else if (endedFlag) {
            clearTimeout(timer);
            reject(new Error(`stream ended; got ${JSON.stringify(events)}`));
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => abort.abort(),
  };
}

export interface ProbeHarness {
  sys: TestSystem;
  url: string;
  admin: ReturnType<typeof api>;
  /** Makes the node count as having a connected agent (a presence row of another instance). */
  online(nodeId: string): Promise<void>;
  close(): Promise<void>;
}

/** A control server on a fresh database with the given nodes; no agent is connected. */
export async function startProbes(nodes: string[] = ['fra1']): Promise<ProbeHarness> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN } });
  const started = await startApp(createControlApp(sys.context));
  const admin = api(`${started.url}/control/v1`, { token: ADMIN_TOKEN });
  for (const id of nodes) {
    const res = await admin.post('/admin/nodes', node(id));
    expect(res.status, res.text).to.equal(201);
  }
  let presence: Presence | undefined;
  return {
    sys,
    url: started.url,
    admin,
    async online(nodeId) {
      if (!presence) {
        presence = new Presence(sys.pool, randomUUID(), sys.log);
        await presence.start();
      }
      await presence.add(randomUUID(), nodeId);
    },
    async close() {
      await started.close();
      await presence?.stop();
      await sys.close();
    },
  };
}
