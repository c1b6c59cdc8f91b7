import { request } from 'node:https';
import { Ports } from '../lib/ports.js';

/**
 * A bench's look at a pod's ha-node API while it measures phases: HTTPS as the kubelet probes it,
 * verifying nothing (a timing observer, not a client that trusts the answer for anything else).
 */
export function watchHaNode(ip: string, path: string, timeoutMs = 500): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: ip, port: Ports.haNodeApi, path, rejectUnauthorized: false, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
