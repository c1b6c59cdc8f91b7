/**
 * Inside the node namespace: an HTTP CONNECT proxy on a unix socket that tunnels to pod
 * addresses only, so that `keelson ctl` on the host (through a 127.0.0.1 forwarder, forward.ts)
 * reaches members' REST APIs and PostgreSQL without the host ever sending to the pod range.
 * Anything but CONNECT to an IPv4 address of the pod /24 is refused.
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { splice } from '../../../lib/splice.js';
import { assertIsolated } from './isolation.js';
import type { NodeSubnet } from './subnet.js';

/** Pure: the tunnel target of a CONNECT request line, or why it is refused. */
export function tunnelTarget(
  authority: string | undefined,
  subnet: Pick<NodeSubnet, 'prefix' | 'firstPod' | 'lastPod'>,
): { host: string; port: number } | { refused: string } {
  const match = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.(\d{1,3}):(\d{1,5})$/.exec(authority ?? '');
  if (!match) return { refused: `CONNECT needs podIP:port, got "${authority ?? ''}"` };
  const [, prefix, octet, portText] = match;
  const port = Number(portText);
  if (prefix !== subnet.prefix || Number(octet) < subnet.firstPod || Number(octet) > subnet.lastPod)
    return { refused: `${prefix}.${octet} is not a pod address of ${subnet.prefix}.0/24` };
  if (port < 1 || port > 65535) return { refused: `port ${port} is out of range` };
  return { host: `${prefix}.${octet}`, port };
}

/** Serves the member proxy on `socketPath` (checked: this namespace must be isolated). */
export async function serveMemberProxy(socketPath: string, subnet: NodeSubnet): Promise<Server> {
  await assertIsolated();
  rmSync(socketPath, { force: true });
  const server = createServer((_req, res) => {
    res.writeHead(405, { 'Content-Type': 'text/plain', Allow: 'CONNECT' }).end('only CONNECT to a pod address\n');
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = tunnelTarget(req.url, subnet);
    if ('refused' in target) {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${target.refused}\n`);
      return;
    }
    const upstream = connect(target.port, target.host);
    let established = false;
    upstream.once('connect', () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      splice(client, upstream);
    });
    upstream.once('error', (error) => {
      if (!established && !client.destroyed)
        client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${target.host}:${target.port}: ${error.message}\n`);
    });
    client.once('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return server;
}
