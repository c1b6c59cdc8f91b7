import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder on 127.0.0.1 that a test can shut, to make a service unreachable as a network
 * outage does: shut, nothing listens on its port (connections are refused) and the connections it
 * carried are cut; opened again, it listens on the same port, so clients configured with that
 * port reach the service again without a change.
 */
export interface TcpGate {
  port: number;
  shut(): Promise<void>;
  open(): Promise<void>;
  close(): Promise<void>;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

export async function startTcpGate(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpGate> {
  const carried = new Set<Socket>();
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect({ host: targetHost, port: targetPort });
      for (const socket of [client, upstream]) {
        carried.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          carried.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
  let server: Server | undefined = makeServer();
  const port = await listen(server, 0);
  const shut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of carried) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  return {
    port,
    shut,
    async open() {
      if (server) return;
      const next = makeServer();
      await listen(next, port);
      server = next;
    },
    close: shut,
  };
}
