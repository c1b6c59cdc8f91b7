import { connect, createServer } from 'node:net';

/** A TCP port that was free on host a moment ago (the OS picks it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on host:port, or rejects after timeoutMs. */
export async function waitForPort(host: string, port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await acceptsConnection(host, port))) {
    if (Date.now() > deadline) throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a TCP connection attempt to host:port met: accepted, refused (or another socket error's code), or no answer within timeoutMs. */
export function connectOutcome(host: string, port: number, timeoutMs = 2_000): Promise<'accepted' | 'timeout' | string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (outcome: string) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => done('accepted'));
    socket.once('timeout', () => done('timeout'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'refused' : (error.code ?? error.message)));
  });
}

/** Whether host:port accepts a TCP connection within timeoutMs, tried from this process's network namespace. */
export async function acceptsConnection(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return (await connectOutcome(host, port, timeoutMs)) === 'accepted';
}
