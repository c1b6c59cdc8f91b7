/**
 * How the host reaches a stack in an isolated node namespace without ever sending to its private
 * addresses: a process inside the node namespace serves a unix socket whose connections it pipes
 * to host:port there; a process in the host's namespace listens on 127.0.0.1 and pipes each
 * connection to that unix socket. The host side only ever connects to a file path.
 */
import { createServer, connect, type Server } from 'node:net';
import { rmSync } from 'node:fs';
import { splice } from '../../../lib/splice.js';
import { assertIsolated } from './isolation.js';

function listening(server: Server, listen: (done: () => void) => void): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    listen(() => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Inside the node namespace (checked): connections to `socketPath` reach host:port of that namespace. */
export async function serveUnixToTcp(socketPath: string, target: { host: string; port: number }): Promise<Server> {
  await assertIsolated();
  rmSync(socketPath, { force: true });
  const server = createServer((client) => splice(client, connect({ host: target.host, port: target.port })));
  return listening(server, (done) => server.listen(socketPath, done));
}

/** In the host's namespace: `host:port` (loopback only) forwards to the unix socket. Port 0 picks one. */
export async function serveLoopbackToUnix(socketPath: string, port = 0, host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) throw new Error(`forwarders listen on loopback only, not on "${host}"`);
  const server = createServer((client) => splice(client, connect({ path: socketPath })));
  await listening(server, (done) => server.listen(port, host, done));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : port };
}
