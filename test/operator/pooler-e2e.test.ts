import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { group, plural, version } from '../../api/crd/types.js';
import { startLoad, type LoadResult } from '../sidecar/pooler/load.js';
import { startPooledCluster, type PooledCluster } from './pooler-e2e-support.js';
import { eventually } from './support.js';

/**
 * Applications behind the operator's pooler (stand-in, local node, real PostgreSQL and PgBouncer):
 * eight clients write through `<name>-pooler-rw` in a loop, recording every acknowledged commit
 * and every error. A declarative switchover and the rolling restart of a parameter change go
 * through ha-node's paused switchover: no client sees an error and every acknowledged commit is
 * on the new primary. A crash of the primary's processes: the clients write again within 1 s of
 * the moment this test sees the survivor promoted (the pooler follows the new primary, not the
 * Service's endpoints). Turning the pooler off then removes everything made for it.
 */
const name = 'pooled';

describe('pooler in front of an operator-run cluster (stand-in, real PostgreSQL and PgBouncer)', { timeout: 900_000 }, () => {
  let cluster: PooledCluster;

  const status = () => cluster.driver.status();
  const patchSpec = async (spec: Record<string, unknown>) => {
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    await cluster.api.custom.patchNamespacedCustomObject(
      { group, version, namespace: cluster.namespace, plural, name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  /** The primary now and the replica, once that one streams. */
  const pair = async (): Promise<{ primary: string; replica: string }> => {
    const s = await cluster.driver.healthyWith(2, 120_000);
    const replica = s.members!.find((m) => m.role === 'replica')!.name;
    await eventually(
      `${replica} streaming`,
      async () => {
        const client = await cluster.direct(replica);
        try {
          return (await client.query<{ status: string }>('SELECT status FROM pg_stat_wal_receiver')).rows[0]?.status === 'streaming';
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      60_000,
    );
    return { primary: s.currentPrimary!, replica };
  };
  /** Eight clients through the pooler while `work` runs, and a second more once it is done. */
  const withEightClients = async (work: () => Promise<void>): Promise<LoadResult> => {
    const load = await startLoad(() => cluster.connect(), 7);
    try {
      await new Promise((r) => setTimeout(r, 1000));
      await work();
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await load.stop();
    }
    return load.result;
  };
  const assertNothingLost = async (load: LoadResult, primary: string, what: string) => {
    process.stderr.write(
      `# ${what}: ${load.acknowledged.length} acknowledged commits, ${load.failures.length} failed, longest stall of the 20 ms client ${Math.round(load.longestStallMs)} ms\n`,
    );
    assert.deepEqual(load.failures, [], `no transaction failed during the ${what}`);
    assert.ok(load.acknowledged.length > 0, 'the clients wrote');
    assert.equal(await cluster.countOn(primary, load.acknowledged), load.acknowledged.length, `every acknowledged commit is on the new primary ${primary}`);
  };

  before(async () => {
    cluster = await startPooledCluster({
      name,
      ipPrefix: '127.0.44',
      spec: { instances: 2, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 }, pooler: { enabled: true, instances: 1 } },
    });
  });
  after(async () => cluster?.close());

  it('a declarative switchover: no failed transaction, every acknowledged commit on the new primary', async () => {
    const { primary, replica } = await pair();
    const load = await withEightClients(async () => {
      await patchSpec({ switchover: { targetInstance: replica } });
      await eventually(
        'switchover Succeeded',
        async () => {
          const s = await status();
          return s.switchover?.result === 'Succeeded' && s.currentPrimary === replica;
        },
        90_000,
      );
    });
    assert.notEqual((await status()).currentPrimary, primary);
    await assertNothingLost(load, replica, 'declarative switchover');
  });

  it('a parameter change that needs a restart rolls through a paused switchover: no failed transaction, nothing lost', async () => {
    const { primary } = await pair();
    const load = await withEightClients(async () => {
      await patchSpec({ postgresql: { parameters: { max_connections: '130' } } });
      await eventually(
        'max_connections 130 on both instances, one primary',
        async () => {
          const s = await status();
          if (s.phase !== 'Healthy' || s.members?.filter((m) => m.role === 'primary').length !== 1) return false;
          for (const pod of await cluster.driver.pods()) {
            const client = await cluster.direct(pod.metadata!.name!);
            try {
              if ((await client.query<{ max_connections: string }>('SHOW max_connections')).rows[0]?.max_connections !== '130') return false;
            } finally {
              await client.end().catch(() => undefined);
            }
          }
          return true;
        },
        240_000,
      );
    });
    const now = (await status()).currentPrimary!;
    assert.notEqual(now, primary, 'the primary moved for its restart');
    assert.ok(
      (await cluster.driver.events()).some((e) => e.reason === 'Switchover' && /restart needed on the primary/.test(e.message ?? '')),
      'a switchover before the primary restarted',
    );
    await assertNothingLost(load, now, 'rolling restart');
  });

  it("a crash of the primary's processes: clients write through the pooler within 1 s of the survivor's promotion", async () => {
    const { primary, replica } = await pair();
    const load = await startLoad(() => cluster.connect(), 7);
    let killedAt: number | undefined;
    let promotedAt = 0;
    try {
      await new Promise((r) => setTimeout(r, 1000));
      killedAt = Date.now();
      assert.ok(cluster.crashPod(primary) > 0, 'processes killed');
      // The moment the survivor takes writes, as this test sees it (polled on one connection every 100 ms, so it is seen late if anything).
      const watcher = await cluster.direct(replica);
      try {
        promotedAt = await eventually(
          `${replica} promoted`,
          async () => {
            const { rows } = await watcher.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
            return rows[0]?.r === false ? Date.now() : undefined;
          },
          90_000,
        );
      } finally {
        await watcher.end().catch(() => undefined);
      }
      await eventually('a commit through the pooler after the promotion', async () => load.result.acknowledgedAt.some((t) => t >= promotedAt), 30_000);
    } finally {
      await load.stop();
    }
    const firstAfter = Math.min(...load.result.acknowledgedAt.filter((t) => t >= promotedAt));
    process.stderr.write(
      `# crash: promotion seen ${promotedAt - (killedAt ?? promotedAt)} ms after the kill, first commit through the pooler ${firstAfter - promotedAt} ms after that; ${load.result.failures.length} failed transactions\n`,
    );
    assert.ok(firstAfter - promotedAt <= 1000, `first commit through the pooler ${firstAfter - promotedAt} ms after the promotion (at most 1000)`);
  });

  it('turning the pooler off removes its objects (all but the role Secret) and the pods; -rw keeps serving', async () => {
    await pair();
    const poolerObjects = async () => {
      const found: string[] = [];
      const labelSelector = `keelson.io/cluster=${name}`;
      for (const [apiVersion, kind] of [
        ['apps/v1', 'Deployment'],
        ['v1', 'Service'],
        ['v1', 'ConfigMap'],
        ['policy/v1', 'PodDisruptionBudget'],
      ] as const) {
        const list = await cluster.api.objects.list(apiVersion, kind, cluster.namespace, undefined, undefined, undefined, undefined, labelSelector);
        found.push(
          ...list.items
            .filter((o) => o.metadata?.labels?.['keelson.io/pooler'] || o.metadata?.name?.includes('-pooler'))
            .map((o) => `${kind}/${o.metadata!.name}`),
        );
      }
      const pods = await cluster.api.core.listNamespacedPod({
        namespace: cluster.namespace,
        labelSelector: `keelson.io/cluster=${name},app.kubernetes.io/component=pooler`,
      });
      return [...found, ...pods.items.map((p) => `Pod/${p.metadata!.name}`)];
    };
    assert.ok((await poolerObjects()).includes(`Deployment/${name}-pooler`), 'the pooler is there to begin with');
    await patchSpec({ pooler: { enabled: false } });
    const left = await eventually(
      'every pooler object and pod gone',
      async () => {
        const now = await poolerObjects();
        return now.length === 0 ? now : undefined;
      },
      240_000,
    ).catch(async (error: Error) => assert.fail(`${error.message}; left: ${(await poolerObjects()).join(', ')}`));
    assert.deepEqual(left, []);
    await cluster.driver.healthyWith(2, 120_000);
    await cluster.driver.readPassword();
    // The pooler's ports are start settings of ha-node, so turning it off rolls the database pods
    // (a switchover, then the old primary restarts); Healthy can be seen before that roll begins.
    // -rw keeps serving means: it reaches a primary again once the roll has passed.
    const row = await eventually(
      `${name}-rw answers`,
      async () => (await cluster.driver.query(`${name}-rw`, 'SELECT pg_is_in_recovery() AS standby'))[0],
      120_000,
    );
    assert.equal(row.standby, false, '-rw still reaches the primary');
  });
});
