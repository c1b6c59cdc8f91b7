/**
 * ha-node API load benchmark (not a test). A 3-member cluster (real ha-node processes with
 * PostgreSQL 15) on the API server stand-in at each timer setting; once the cluster is at steady
 * state (a primary, two streaming replicas) the stand-in counts every request for DURATION seconds,
 * by client (each member has its own bearer token), verb and resource, plus the new TCP/TLS
 * connections each client opened. Printed next to Patroni's figures on Kubernetes (from its code).
 * SETTLE seconds pass first: PostgreSQL's own post-bootstrap WAL (autovacuum, standby snapshots)
 * moves WAL positions and so member records for a while after start.
 * Run: node --import tsx bench/api-load.ts   (DURATION=120, SETTLE=60, SETTINGS=30/10,10/2)
 */
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { startApiServer } from '../local/apiserver/server.js';
import { createLogger } from '../lib/log.js';
import { startCluster, type TestCluster } from '../test/sidecar/ha-node/harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { classifyObject, classifyRequest, emptyTally, formatLoad, type LoadResult, type LoadTally, type Setting } from './api-load-table.js';
import { LeaseWriteLog } from './api-load-writes.js';

const durationSeconds = Number(process.env.DURATION ?? 120);
const settleSeconds = Number(process.env.SETTLE ?? 60);
const settings: Setting[] = (process.env.SETTINGS ?? '30/10,10/2').split(',').map((pair) => {
  const [ttl, loopWait] = pair.split('/').map(Number);
  return { ttl: ttl ?? 30, loopWait: loopWait ?? 10 };
});

/** Counts requests and new connections per client while `counting` is on. */
class Counter {
  counting = false;
  readonly tallies = new Map<string, LoadTally>();
  private readonly sockets = new WeakSet<object>();

  observe(request: IncomingMessage): void {
    const auth = request.headers.authorization ?? '';
    const client = auth.startsWith('Bearer member-') ? auth.slice('Bearer member-'.length) : 'other';
    const fresh = !this.sockets.has(request.socket);
    this.sockets.add(request.socket);
    if (!this.counting) return;
    const tally = this.tallies.get(client) ?? emptyTally();
    this.tallies.set(client, tally);
    if (fresh) tally.connections += 1;
    const key = classifyRequest(request.method ?? 'GET', request.url ?? '/');
    tally.requests.set(key, (tally.requests.get(key) ?? 0) + 1);
    const object = classifyObject(request.method ?? 'GET', request.url ?? '/');
    if (object) tally.objects.set(object, (tally.objects.get(object) ?? 0) + 1);
  }
}

async function settle(cluster: TestCluster): Promise<void> {
  await cluster.waitFor('a primary', () => cluster.primary(), 180_000);
  await cluster.waitFor(
    'two streaming replicas',
    async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === 2;
    },
    180_000,
  );
}

async function measure(setting: Setting): Promise<LoadResult> {
  const counter = new Counter();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-api-load-'));
  const api = await startApiServer({ dir, logger: createLogger({ name: 'apiserver', level: 'warn' }), onRequest: (request) => counter.observe(request) });
  const names = [0, 1, 2].map((i) => `load-${i}`);
  const memberOptions = names.map((name) => {
    const path = join(dir, `kubeconfig-${name}`);
    api.writeKubeconfig(path, { token: `member-${name}` });
    return { env: { KUBECONFIG: path } };
  });
  const cluster = await startCluster({
    scope: 'load',
    ttl: setting.ttl,
    loopWait: setting.loopWait,
    retryTimeout: Math.max(2, setting.loopWait),
    api,
    memberOptions,
  });
  const writes = new LeaseWriteLog(cluster.kubeConfig, cluster.scope);
  try {
    await writes.start();
    await settle(cluster);
    // Let the last bootstrap writes (slots, sync, member records) land before counting.
    await new Promise((r) => setTimeout(r, Math.max(settleSeconds, 2 * setting.loopWait) * 1000));
    counter.counting = true;
    writes.counting = true;
    await new Promise((r) => setTimeout(r, durationSeconds * 1000));
    counter.counting = false;
    writes.counting = false;
    return { setting, tallies: counter.tallies, changes: writes.changes, times: writes.times };
  } finally {
    writes.stop();
    await cluster.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: LoadResult[] = [];
for (const setting of settings) {
  console.log(`measuring ttl ${setting.ttl} / loop_wait ${setting.loopWait} for ${durationSeconds} s ...`);
  results.push(await measure(setting));
}
console.log(formatLoad(results, durationSeconds));
