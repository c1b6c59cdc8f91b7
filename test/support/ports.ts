import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * Where freePort looks: below the kernel's ephemeral range. A port the OS picked (listen on port
 * 0) is handed out again to any process's next port-0 listen once it is free; a server restarted
 * later on it (PostgreSQL after a demotion) could then find it taken by another suite's test
 * server. Ports below that range are never handed out by the OS.
 */
function portRange(): { low: number; high: number } {
  let ephemeralStart = 32768;
  try {
    ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralStart;
  } catch {
    // not Linux: the usual start
  }
  const high = Math.min(ephemeralStart - 1, 32767);
  return { low: Math.max(1024, high - 12_767), high };
}

function listensOn(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A TCP port free on host a moment ago, outside the OS's ephemeral range (see portRange). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const { low, high } = portRange();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await listensOn(host, port)) return port;
  }
  return osPickedPort(host);
}

function osPickedPort(host: string): Promise<number> {
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
