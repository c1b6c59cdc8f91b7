/**
 * Network partitions of the primary, end to end with real PostgreSQL: the whole stack runs in an
 * isolated node namespace, each pod in a namespace of its own (ADR 0354). A writer records every
 * commit acknowledged through demo-rw; a sampler writes to each member directly. Each fault is
 * held past ttl, then healed: no two members ever take writes at once, no acknowledged commit is
 * lost (synchronous mode), the old primary rejoins, and the cluster is Healthy within 30 s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { cutFromApiServer, cutFromEverything } from '../../local/node/netns/partition.js';
import { nodeSubnet } from '../../local/node/netns/subnet.js';
import { enterIsolatedRun } from '../support/netns.js';
import { faultRound, startPartitionCluster } from './partition-round.js';

const inside = await enterIsolatedRun(import.meta.url, 420_000);
const ttlSeconds = 10;
const subnet = nodeSubnet('10.213.20');
const logger = createLogger({ name: 'partition', level: process.env.LOG_LEVEL ?? 'silent' });

if (inside) {
  describe('partitions of the primary (namespace mode, real PostgreSQL, synchronous mode)', { timeout: 400_000 }, () => {
    let cluster: Awaited<ReturnType<typeof startPartitionCluster>>;
    let nextId = 1;

    before(async () => {
      cluster = await startPartitionCluster({ podNetwork: subnet.prefix, ttlSeconds, logger });
      assert.ok(cluster.members.every((m) => m.ip.startsWith(`${subnet.prefix}.`)), `pods on the private network: ${JSON.stringify(cluster.members)}`);
    });

    after(async () => {
      await cluster?.close();
    });

    async function judgedRound(cut: (namespacePath: string) => Promise<unknown>): Promise<void> {
      const round = await faultRound({ ...cluster, firstId: nextId, healthyTimeoutMs: 30_000 }, cut);
      nextId += 100_000;
      assert.equal(round.status.currentPrimary, round.successor, 'status names the member that takes writes');
      assert.ok(round.standbys.includes(round.successor), `the successor ${round.successor} was a synchronous standby (${round.standbys.join(',')})`);
      assert.equal(round.status.members?.find((m) => m.name === round.old)?.role, 'replica', `${round.old} rejoined as a replica`);
      assert.ok(round.acknowledged > 0, 'the writer had commits acknowledged');
      assert.deepEqual(round.missing, [], 'no acknowledged commit is lost');
      assert.deepEqual(round.splitBrains, [], 'never two members taking writes at once');
    }

    it('full cut of the primary held past ttl, then healed', async () => {
      await judgedRound((path) => cutFromEverything(path));
    });

    it('API-only cut of the primary held past ttl, then healed', async () => {
      await judgedRound((path) => cutFromApiServer(path, subnet));
    });
  });
}
