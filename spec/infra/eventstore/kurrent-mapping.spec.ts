import { expect } from 'chai';
import {
  ANY,
  NO_STREAM,
  START as CLIENT_START,
  STREAM_EXISTS,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import {
  fromCurrentState,
  fromStoredMetadata,
  isAfter,
  isDeliverable,
  isStreamNotFound,
  mapAppendError,
  redactConnectionString,
  satisfies,
  toAppendState,
  toGlobalPosition,
  toReadPosition,
  toRecordedEvent,
  toStoredMetadata,
} from '../../../infra/eventstore/kurrent/mapping.js';
import { START, WrongExpectedVersion, type StreamWrite } from '../../../infra/eventstore/types.js';

describe('KurrentDB adapter mapping (no server)', () => {
  describe('expected versions', () => {
    it('maps each expected version to the client append state', () => {
      expect(toAppendState('no_stream')).to.equal(NO_STREAM);
      expect(toAppendState('exists')).to.equal(STREAM_EXISTS);
      expect(toAppendState('any')).to.equal(ANY);
      expect(toAppendState(0)).to.equal(0n);
      expect(toAppendState(41)).to.equal(41n);
    });

    it('refuses versions the server cannot express', () => {
      expect(() => toAppendState(-1)).to.throw(/invalid expected version/);
      expect(() => toAppendState(1.5)).to.throw(/invalid expected version/);
    });

    it('maps the current state of a conflict to a version or no_stream', () => {
      expect(fromCurrentState('no_stream')).to.equal('no_stream');
      expect(fromCurrentState(undefined)).to.equal('no_stream');
      expect(fromCurrentState(-1n)).to.equal('no_stream');
      expect(fromCurrentState(-5n)).to.equal('no_stream');
      expect(fromCurrentState(0n)).to.equal(0);
      expect(fromCurrentState(7n)).to.equal(7);
      expect(fromCurrentState('3')).to.equal(3);
    });

    it('checks a write without events against the current version', () => {
      expect(satisfies('any', 'no_stream')).to.equal(true);
      expect(satisfies('no_stream', 'no_stream')).to.equal(true);
      expect(satisfies('no_stream', 0)).to.equal(false);
      expect(satisfies('exists', 'no_stream')).to.equal(false);
      expect(satisfies('exists', 2)).to.equal(true);
      expect(satisfies(2, 2)).to.equal(true);
      expect(satisfies(2, 3)).to.equal(false);
    });
  });

  describe('positions', () => {
    it('maps a $all position to {tx: commit, pos: prepare} and back', () => {
      const p = toGlobalPosition({ commit: 1200n, prepare: 1100n });
      expect(p).to.deep.equal({ tx: 1200n, pos: 1100n });
      expect(toReadPosition(p)).to.deep.equal({ commit: 1200n, prepare: 1100n });
    });

    it('reads from the start of $all for START', () => {
      expect(toReadPosition(START)).to.equal(CLIENT_START);
    });

    it('keeps only positions strictly after the cursor, commit first', () => {
      const from = { tx: 10n, pos: 5n };
      expect(isAfter({ tx: 10n, pos: 5n }, from)).to.equal(false);
      expect(isAfter({ tx: 10n, pos: 4n }, from)).to.equal(false);
      expect(isAfter({ tx: 10n, pos: 6n }, from)).to.equal(true);
      expect(isAfter({ tx: 11n, pos: 0n }, from)).to.equal(true);
      expect(isAfter({ tx: 9n, pos: 99n }, from)).to.equal(false);
    });
  });

  describe('system events', () => {
    it('delivers neither $ types nor $ streams', () => {
      expect(isDeliverable({ streamId: 'node-1', type: 'NodeCreated' })).to.equal(true);
      expect(isDeliverable({ streamId: 'node-1', type: '$streamDeleted' })).to.equal(false);
      expect(isDeliverable({ streamId: '$$node-1', type: '$metadata' })).to.equal(false);
      expect(isDeliverable({ streamId: '$projections-x-result', type: 'Result' })).to.equal(false);
      expect(isDeliverable({ streamId: '$ce-node', type: '$>' })).to.equal(false);
    });
  });

  describe('metadata', () => {
    const now = () => new Date('2025-01-02T03:04:05.000Z');

    it('stores string values only, dropping absent fields and defaulting recordedAt', () => {
      expect(toStoredMetadata({ actor: 'alice', requestId: 'r1', clientAddress: undefined }, now)).to.deep.equal({
        actor: 'alice',
        requestId: 'r1',
        recordedAt: '2025-01-02T03:04:05.000Z',
      });
      expect(toStoredMetadata({ actor: 'a', recordedAt: '2024-12-31T00:00:00.000Z', causationId: 'c', correlationId: 'k' }, now)).to.deep.equal({
        actor: 'a',
        recordedAt: '2024-12-31T00:00:00.000Z',
        causationId: 'c',
        correlationId: 'k',
      });
    });

    it("reads metadata back without the server's $ properties", () => {
      expect(fromStoredMetadata({ actor: 'a', requestId: 'r', '$schema.name': 'T', '$schema.format': 'Json' })).to.deep.equal({ actor: 'a', requestId: 'r' });
      expect(fromStoredMetadata(new TextEncoder().encode('{"actor":"b"}'))).to.deep.equal({ actor: 'b' });
      expect(fromStoredMetadata(undefined)).to.deep.equal({ actor: '' });
      expect(fromStoredMetadata(new Uint8Array([0xff]))).to.deep.equal({ actor: '' });
    });
  });

  describe('recorded events', () => {
    it('maps a client event to the port shape', () => {
      const created = new Date('2025-01-01T00:00:00.000Z');
      const event = toRecordedEvent({
        id: '6f1c2e1e-0a52-4c35-9f61-4cf0b1f0a001',
        streamId: 'node-1',
        revision: 3n,
        type: 'Renamed',
        data: { name: 'x' },
        metadata: { actor: 'a', recordedAt: '2025-01-01T00:00:00.000Z' },
        created,
        position: { commit: 500n, prepare: 480n },
      });
      expect(event).to.deep.equal({
        id: '6f1c2e1e-0a52-4c35-9f61-4cf0b1f0a001',
        streamId: 'node-1',
        version: 3,
        type: 'Renamed',
        data: { name: 'x' },
        metadata: { actor: 'a', recordedAt: '2025-01-01T00:00:00.000Z' },
        position: { tx: 500n, pos: 480n },
        recordedAt: created,
      });
    });

    it('refuses an event without a $all position', () => {
      expect(() =>
        toRecordedEvent({ id: '6f1c2e1e-0a52-4c35-9f61-4cf0b1f0a002', streamId: 's', revision: 0n, type: 'T', data: {}, created: new Date() }),
      ).to.throw(/without a \$all position/);
    });
  });

  describe('errors', () => {
    const writes: StreamWrite[] = [
      { streamId: 'm1', expected: 'no_stream', events: [{ type: 'A', data: {} }] },
      { streamId: 'm2', expected: 4, events: [{ type: 'B', data: {} }] },
    ];

    it("maps the client WrongExpectedVersionError to ours with the writer's expected version", () => {
      const clientErr = new WrongExpectedVersionError(undefined, { streamName: 'm2', expected: 4n, current: 6n });
      const err = mapAppendError(clientErr, writes);
      expect(err).to.be.instanceOf(WrongExpectedVersion);
      expect(err).to.include({ streamId: 'm2', expected: 4, actual: 6 });
      expect((err as Error).cause).to.equal(clientErr);
    });

    it('maps a missing stream to no_stream', () => {
      const clientErr = new WrongExpectedVersionError(undefined, { streamName: 'm1', expected: STREAM_EXISTS, current: NO_STREAM });
      const err = mapAppendError(clientErr, [{ streamId: 'm1', expected: 'exists', events: [] }]);
      expect(err).to.include({ streamId: 'm1', expected: 'exists', actual: 'no_stream' });
    });

    it('maps a consistency violation (appendRecords) to the violated stream', () => {
      const clientErr = {
        type: 'append-consistency-violation',
        violations: [{ checkIndex: 1, streamName: 'm2', expectedState: 4n, actualState: 'no_stream' }],
      };
      const err = mapAppendError(clientErr, writes);
      expect(err).to.be.instanceOf(WrongExpectedVersion);
      expect(err).to.include({ streamId: 'm2', expected: 4, actual: 'no_stream' });
    });

    it('leaves other errors alone', () => {
      const unavailable = new UnavailableError(undefined, 'down');
      expect(mapAppendError(unavailable, writes)).to.equal(unavailable);
      const unknownStream = new WrongExpectedVersionError(undefined, { streamName: 'other', expected: ANY, current: 1n });
      expect(mapAppendError(unknownStream, writes)).to.equal(unknownStream);
    });

    it('recognises a missing stream on reads', () => {
      expect(isStreamNotFound(new StreamNotFoundError(undefined, 'x'))).to.equal(true);
      expect(isStreamNotFound(new Error('x'))).to.equal(false);
      expect(isStreamNotFound(undefined)).to.equal(false);
    });
  });

  it('hides the password of a connection string', () => {
    expect(redactConnectionString('kurrentdb://admin:changeit@db.example:2113?tls=true')).to.equal('kurrentdb://admin:***@db.example:2113?tls=true');
    expect(redactConnectionString('esdb://127.0.0.1:2113?tls=false')).to.equal('esdb://127.0.0.1:2113?tls=false');
  });
});
