import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import type { RoaSet } from '../../../domain/rpki/roa.js';
import { readHeldRoas, refreshRoas } from '../../../agent/rpki/held.js';
import type { AgentRuntime } from '../../../agent/runtime.js';
import { withRpkiStates } from '../../../agent/telemetry/rpki.js';
import { tempDir } from '../support/core.js';

const SET: RoaSet = { commit: 'abc', synced_at: '2026-11-01T12:00:00.000Z', roas: [{ prefix: '172.20.0.0/24', max_length: 24, asn: 4242420001 }] };
const NEXT: RoaSet = { ...SET, commit: 'def', roas: [...SET.roas, { prefix: 'fd42::/48', max_length: 64, asn: 4242420002 }] };

type Answer = { status: number; body: unknown; etag?: string } | Error;

/** A runtime whose `request` answers from `answers` in turn and records each call's headers. */
function runtime(answers: Answer[], calls: Record<string, string>[]): AgentRuntime {
  return {
    logger: pino({ level: 'silent' }),
    request: async (_method: string, _path: string, _body?: unknown, headers: Record<string, string> = {}) => {
      calls.push(headers);
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    },
  } as unknown as AgentRuntime;
}

describe('agent: the held ROA set', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let path: string;
  beforeEach(async () => {
    dir = await tempDir('dn42-roas-');
    path = join(dir.path, 'roas.json');
  });
  afterEach(() => dir.remove());

  it('keeps a new set with its tag, sends the tag back, and leaves the file alone on a 304', async () => {
    const calls: Record<string, string>[] = [];
    const rt = runtime(
      [
        { status: 200, body: SET, etag: '"roas-1"' },
        { status: 304, body: null },
      ],
      calls,
    );
    expect(await refreshRoas(rt, path)).to.deep.equal({ held: { etag: '"roas-1"', set: SET }, changed: true });
    const written = (await stat(path)).mtimeMs;
    expect(await refreshRoas(rt, path)).to.deep.equal({ held: { etag: '"roas-1"', set: SET }, changed: false });
    expect(calls).to.deep.equal([{}, { 'if-none-match': '"roas-1"' }]);
    expect((await stat(path)).mtimeMs).to.equal(written);
  });

  it('keeps the held set on every failure: no replica (404), replica down (503), a body that is no ROA set, an unreachable server', async () => {
    await writeFile(path, JSON.stringify({ etag: '"roas-1"', set: SET }));
    const bad = { ...NEXT, roas: [{ prefix: '172.20.0.1/24', max_length: 24, asn: 1 }] };
    const rt = runtime(
      [{ status: 404, body: { detail: 'no ROA set' } }, { status: 503, body: {} }, { status: 200, body: bad, etag: '"roas-2"' }, new Error('ECONNREFUSED')],
      [],
    );
    for (let i = 0; i < 4; i++) expect(await refreshRoas(rt, path)).to.deep.equal({ held: { etag: '"roas-1"', set: SET }, changed: false });
    expect(JSON.parse(await readFile(path, 'utf8')).set).to.deep.equal(SET);
  });

  it('replaces the held set with a changed one; an unreadable file counts as none', async () => {
    await writeFile(path, '{ not json');
    expect(await readHeldRoas(path)).to.equal(null);
    const rt = runtime([{ status: 200, body: NEXT, etag: '"roas-2"' }], []);
    expect((await refreshRoas(rt, path)).changed).to.equal(true);
    expect(await readHeldRoas(path)).to.deep.equal({ etag: '"roas-2"', set: NEXT });
  });

  it('gives each observed route its state; a route without an AS path is checked with the node’s own ASN', () => {
    const route = (prefix: string, origin: number | null, local = false) => ({
      prefix,
      protocol: 'p',
      origin_asn: origin,
      as_path: origin === null ? [] : [origin],
      rpki: null,
      local,
    });
    const states = withRpkiStates(
      [route('172.20.0.0/24', null, true), route('172.20.0.0/25', 4242420001), route('fd42::/56', 4242420002), route('172.22.0.0/24', 1)],
      NEXT,
      4242420001,
    );
    expect(states.map((r) => r.rpki)).to.deep.equal(['valid', 'invalid', 'valid', 'not_found']);
  });
});
