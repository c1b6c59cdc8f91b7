/**
 * Network partitions of the primary, end to end with real PostgreSQL: the whole stack runs in an
 * isolated node namespace, each pod in a namespace of its own (ADR 0354). A writer records every
 * commit acknowledged through demo-rw; a sampler writes to each member directly. Each fault is
 * held past ttl, then healed: no two members ever take writes at once, no acknowledged commit is
 * lost (synchronous mode), the old primary rejoins, and the cluster is Healthy within 30 s.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { startLocalStack, type LocalStack } from '../../local/cluster/stack.js';
import { cutFromApiServer, cutFromEverything, heal } from '../../local/node/netns/partition.js';
import { nodeSubnet } from '../../local/node/netns/subnet.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { enterIsolatedRun } from '../support/netns.js';
import { clusterDriver, keepWriting, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { committedSince, splitBrainInstants, startSampler } from './partition-support.js';
import { eventually } from './support.js';

const inside = await enterIsolatedRun(import.meta.url, 420_000);
const ns = 'default';
const ttlSeconds = 10;
const subnet = nodeSubnet('10.213.20');
const logger = createLogger({ name: 'partition', level: process.env.LOG_LEVEL ?? 'silent' });

if (inside) {
  describe('partitions of the primary (namespace mode, real PostgreSQL, synchronous mode)', { timeout: 400_000 }, () => {
    let dir: string;
    let stack: LocalStack;
    let api: OperatorKubeApi;
    let demo: ClusterDriver;
    let sampler: ReturnType<typeof startSampler>;
    let nextId = 1;

    const namespaceOf = (pod: string): string => {
      const worker = [...stack.node.agent.workers.values()].find((w) => w.key === `${ns}/${pod}` && !w.isTerminated);
      const path = worker?.networkNamespace;
      if (!path) throw new Error(`no network namespace for pod ${pod}`);
      return path;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'keelson-partition-'));
      chmodSync(dir, 0o755);
      stack = await startLocalStack({ dir, logger, operatorVersion: '0.1.0', ipPrefix: '127.0.43', network: 'namespace', podNetwork: subnet.prefix });
      api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
      demo = clusterDriver(api, ns, 'demo', viaClusterIp);
      await demo.create({ instances: 3, ha: { ttl: ttlSeconds, loopWait: 2, retryTimeout: 4, synchronousMode: 'on' } });
      await demo.healthyWith(3, 120_000);
      await demo.readPassword();
      await demo.query('demo-rw', 'CREATE TABLE IF NOT EXISTS acks (id int PRIMARY KEY, note text)');
      await demo.query('demo-rw', 'CREATE TABLE IF NOT EXISTS samples (member text, at timestamptz DEFAULT now())');
      const members = (await demo.pods()).map((p) => ({ name: p.metadata!.name!, ip: p.status!.podIP! }));
      assert.ok(members.every((m) => m.ip.startsWith(`${subnet.prefix}.`)), `pods on the private network: ${JSON.stringify(members)}`);
      const secret = await api.core.readNamespacedSecret({ namespace: ns, name: 'demo-superuser' });
      sampler = startSampler({ members, password: Buffer.from(secret.data!.password!, 'base64').toString('utf8'), table: 'samples' });
    });

    after(async () => {
      await sampler?.stop();
      await stack?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function faultRound(cut: (namespacePath: string) => Promise<unknown>): Promise<void> {
      const old = (await demo.status()).currentPrimary!;
      const path = namespaceOf(old);
      // Synchronous mode promotes only a member the sync key names: wait until the primary published one.
      const standby = await eventually('a synchronous standby in the sync key', async () => {
        const sync = (await api.listLeases(ns)).find((l) => l.metadata?.name === 'demo-sync')?.metadata?.annotations;
        return sync?.leader === old && sync.sync_standby ? sync.sync_standby : undefined;
      }, 30_000);
      const writer = keepWriting(demo, 'demo-rw', 'acks', nextId);
      await eventually(`${old} takes samples before the fault`, async () => committedSince(sampler.samples, Date.now() - 1000).includes(old), 15_000);
      const cutAt = Date.now();
      await cut(path);
      let healed = false;
      try {
        const successor = await eventually('another member takes writes', async () => committedSince(sampler.samples, cutAt, old)[0], 60_000);
        // Held past ttl: whatever the old primary does on its own has had time to happen.
        await new Promise((r) => setTimeout(r, Math.max(0, cutAt + 2 * ttlSeconds * 1000 - Date.now())));
        await heal(path);
        healed = true;
        const s = await demo.healthyWith(3, 30_000);
        assert.equal(s.currentPrimary, successor, 'status names the member that takes writes');
        assert.ok(standby.split(',').includes(successor), `the successor ${successor} was a synchronous standby (${standby})`);
        assert.equal(s.members?.find((m) => m.name === old)?.role, 'replica', `${old} rejoined as a replica`);
      } finally {
        if (!healed) await heal(path);
      }
      const acknowledged = await writer.stop();
      nextId += 100_000;
      assert.ok(acknowledged.length > 0, 'the writer had commits acknowledged');
      const present = await eventually('acknowledged rows readable through demo-rw', async () => demo.query('demo-rw', 'SELECT id FROM acks WHERE id = ANY($1)', [acknowledged]), 30_000);
      const missing = acknowledged.filter((id) => !present.some((row) => row.id === id));
      assert.deepEqual(missing, [], 'no acknowledged commit is lost');
      assert.deepEqual(splitBrainInstants(sampler.samples), [], 'never two members taking writes at once');
    }

    it('full cut of the primary held past ttl, then healed', async () => {
      await faultRound((path) => cutFromEverything(path));
    });

    it('API-only cut of the primary held past ttl, then healed', async () => {
      await faultRound((path) => cutFromApiServer(path, subnet));
    });
  });
}
