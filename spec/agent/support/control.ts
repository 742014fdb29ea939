import type { Server } from 'node:http';
import { createControlApp } from '../../../http/control/app.js';
import { socketsOf, type ControlSockets } from '../../../http/control/sockets.js';
import type { TestSystem } from '../../support/system.js';

/** One control app of a test system, listening on a port of the test's choice. */
export interface ListeningControl {
  sockets: ControlSockets;
  close(): Promise<void>;
}

/**
 * The control app of `sys` on a fixed port, so that a spec can stop it and
 * start it again where the agent expects it (the agent's reconnects), or run a
 * second one beside it on the same database (an administrator's writes while
 * the agent's server is away).
 */
export async function listenControl(sys: TestSystem, port: number): Promise<ListeningControl> {
  const app = createControlApp(sys.context);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });
  const sockets = (await socketsOf(app, server))!;
  return {
    sockets,
    async close() {
      await sockets.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
