import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import { limitServer, listenOptions, SERVER_LIMITS } from '../../../http/shared/server-limits.js';

describe('server limits', () => {
  it('caps header and request time, keep-alive idle time and open connections', () => {
    const server = limitServer(createServer());
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.maxConnections]).to.deep.equal([
      SERVER_LIMITS.headersTimeoutMs,
      SERVER_LIMITS.requestTimeoutMs,
      SERVER_LIMITS.keepAliveTimeoutMs,
      SERVER_LIMITS.maxConnections,
    ]);
    expect(SERVER_LIMITS.requestTimeoutMs).to.be.below(300_000);
  });

  it('closes connections beyond the cap', async () => {
    const server = limitServer(createServer((_req, res) => res.end('ok')));
    server.maxConnections = 1;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const first = connect(port, '127.0.0.1');
    await new Promise((resolve) => first.once('connect', resolve));
    // The first connection is accepted and held; the second is dropped by the server.
    const second = connect(port, '127.0.0.1');
    await new Promise((resolve) => second.once('close', resolve));
    expect(first.destroyed).to.equal(false);
    first.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('listens with a backlog of 4096 (as far as net.core.somaxconn allows), not the 511 of Node', async () => {
    const server = limitServer(createServer());
    await new Promise<void>((resolve) => server.listen(listenOptions(0, '127.0.0.1'), resolve));
    try {
      const port = (server.address() as { port: number }).port;
      // For a listening socket, ss shows the accept queue's limit as Send-Q.
      const line = execFileSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' }).trim();
      const sendQ = Number(line.split(/\s+/)[2]);
      const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
      expect(sendQ).to.equal(Math.min(SERVER_LIMITS.listenBacklog, somaxconn));
      expect(sendQ).to.be.above(511);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
