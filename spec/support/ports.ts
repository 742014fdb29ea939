import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback TCP port that was free a moment ago (bound and released): for a URL that must be known before its server listens, or that nothing listens on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((res) => server.close(() => res()));
  return port;
}
