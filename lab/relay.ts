import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A byte relay between a namespace's loopback and the root namespace's: the
 * agents in node namespaces cannot reach the control server on the root's
 * 127.0.0.1, but a unix socket is a file and crosses namespaces.
 *
 *   relay.ts unix <socket> <port>   (root namespace) socket -> 127.0.0.1:<port>
 *   relay.ts tcp <port> <socket>    (node namespace) 127.0.0.1:<port> -> socket
 *
 * Plain TCP bytes both ways, so HTTP and WebSockets pass alike. Run as a
 * process of its own; its argv carries the lab's state dir.
 */

function pipe(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', end).on('close', end);
  b.on('error', end).on('close', end);
}

function main(argv: string[]): void {
  const [kind, from, to] = argv;
  if (kind === 'unix' && from && to) {
    rmSync(from, { force: true });
    const server = createServer((client) => pipe(client, connect({ host: '127.0.0.1', port: Number(to) })));
    server.listen(from, () => process.stdout.write(`relay: ${from} -> 127.0.0.1:${to}\n`));
    return;
  }
  if (kind === 'tcp' && from && to) {
    const server = createServer((client) => pipe(client, connect({ path: to })));
    server.listen(Number(from), '127.0.0.1', () => process.stdout.write(`relay: 127.0.0.1:${from} -> ${to}\n`));
    return;
  }
  process.stderr.write('usage: relay.ts unix <socket> <port> | relay.ts tcp <port> <socket>\n');
  process.exit(2);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
main(process.argv.slice(2));
