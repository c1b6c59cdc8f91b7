/**
 * The host reaches a server inside an isolated node namespace through 127.0.0.1 and a unix
 * socket only; the inside half refuses to serve from a namespace with a way out.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { serveLoopbackToUnix, serveUnixToTcp } from '../../../../local/node/netns/forward.js';
import { spawnIsolated } from '../../../../local/node/netns/isolated-run.js';

const inner = fileURLToPath(new URL('./fixtures/forward-inner.ts', import.meta.url));

describe('forwarders into an isolated node namespace', { timeout: 60_000 }, () => {
  it('serves 127.0.0.1 in the host namespace through a unix socket to a private address inside', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-forward-'));
    const socket = join(dir, 'api.sock');
    const child = spawnIsolated([process.execPath, '--import', 'tsx', inner, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`inner side exited with ${code}`)));
      });
      const { server, port } = await serveLoopbackToUnix(socket);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5000) });
        assert.equal(await res.text(), 'inside 10.213.40.254');
      } finally {
        server.close();
      }
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('listens on loopback only, and serves the inside half only in an isolated namespace', async () => {
    await assert.rejects(serveLoopbackToUnix('/nonexistent.sock', 0, '0.0.0.0'), /loopback only/);
    await assert.rejects(serveUnixToTcp(join(tmpdir(), 'never.sock'), { host: '127.0.0.1', port: 1 }), /refusing namespace mode/);
  });
});
