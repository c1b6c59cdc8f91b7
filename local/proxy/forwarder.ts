/**
 * One Service port: listens on clusterIP:port and forwards each TCP connection to one of the
 * current backends (round robin). Replacing the backend list closes the connections that went to
 * a backend no longer listed, so clients notice a moved primary at once instead of hanging on.
 * Without backends nothing listens, so clients get "connection refused" as from kube-proxy's
 * REJECT rule (and idle Services hold no port).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Logger } from '../../lib/log.js';

export interface Backend {
  ip: string;
  port: number;
}

export const backendKey = (b: Backend): string => `${b.ip}:${b.port}`;

export class PortForwarder {
  private backends: Backend[] = [];
  private next = 0;
  private server?: Server;
  private readonly connections = new Map<string, Set<Socket>>();

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly logger: Logger,
  ) {}

  get listening(): boolean {
    return this.server !== undefined;
  }

  private async listen(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.host, port: this.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.logger.warn({ host: this.host, port: this.port, err: err.message }, 'service listener error'));
    this.server = server;
  }

  /** Replaces the backends; listens while there are any. Rejects when the address cannot be bound. */
  async setBackends(backends: Backend[]): Promise<void> {
    const keep = new Set(backends.map(backendKey));
    for (const [key, sockets] of this.connections) {
      if (keep.has(key)) continue;
      for (const socket of sockets) socket.destroy();
      this.connections.delete(key);
    }
    this.backends = [...backends];
    if (backends.length === 0) await this.stopListening();
    else if (!this.server) await this.listen();
  }

  private async stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get currentBackends(): readonly Backend[] {
    return this.backends;
  }

  get openConnections(): number {
    let total = 0;
    for (const sockets of this.connections.values()) total += sockets.size;
    return total;
  }

  private accept(client: Socket): void {
    if (this.backends.length === 0) {
      client.destroy();
      return;
    }
    const backend = this.backends[this.next % this.backends.length];
    this.next = (this.next + 1) % Math.max(this.backends.length, 1);
    const key = backendKey(backend);
    const upstream = connect({ host: backend.ip, port: backend.port });
    let group = this.connections.get(key);
    if (!group) {
      group = new Set();
      this.connections.set(key, group);
    }
    const tracked = group;
    tracked.add(client);
    const close = (): void => {
      tracked.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  async close(): Promise<void> {
    await this.setBackends([]);
  }
}
