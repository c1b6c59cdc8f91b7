import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LiveWal, withFreshPositions } from '../../../../sidecar/ha-node/api/live-wal.js';
import type { NodeSnapshot } from '../../../../sidecar/ha-node/ha/snapshot.js';
import { parseLsn } from '../../../../sidecar/ha-node/postgres/lsn.js';
import type { ServerStatus } from '../../../../sidecar/ha-node/postgres/status.js';
import { HaNodePaths } from '../../../../lib/ports.js';
import { startCluster, type TestCluster } from '../harness.js';

const replica = (received: number): ServerStatus => ({
  inRecovery: true,
  postmasterStartTime: '2026-01-01 00:00:00.000000+00:00',
  serverVersion: 150000,
  timeline: 1,
  systemIdentifier: '7000000000000000001',
  receivedLocation: received,
  replayedLocation: received,
  replayedTimestamp: null,
  paused: false,
  replication: [],
  synchronousStandbyNames: '',
});

describe('node document WAL positions read at request time', () => {
  it('takes the fresh positions only while the server is in the mode the loop saw', () => {
    assert.equal(withFreshPositions(replica(100), replica(900)).receivedLocation, 900);
    const promoted = { ...replica(0), inRecovery: false, location: 1000 };
    assert.equal(withFreshPositions(replica(100), promoted).inRecovery, true, "a promotion is the loop's to report");
    assert.equal(withFreshPositions(replica(100), promoted).receivedLocation, 100);
    assert.equal(withFreshPositions(replica(100), { ...replica(900), systemIdentifier: 'other' }).receivedLocation, 100);
  });

  it('requests arriving together share one query; a failing or slow one falls back to the snapshot', async () => {
    let reads = 0;
    const snapshot = { status: replica(100) } as NodeSnapshot;
    const shared = new LiveWal(async () => {
      reads += 1;
      await new Promise((r) => setTimeout(r, 50));
      return replica(500);
    });
    const answers = await Promise.all(Array.from({ length: 20 }, () => shared.refresh(snapshot)));
    assert.equal(reads, 1);
    assert.ok(answers.every((a) => a.status?.receivedLocation === 500));
    assert.equal((await new LiveWal(() => Promise.reject(new Error('down'))).refresh(snapshot)).status?.receivedLocation, 100);
    assert.equal((await new LiveWal(() => new Promise(() => undefined), 30).refresh(snapshot)).status?.receivedLocation, 100);
    assert.equal((await shared.refresh({} as NodeSnapshot)).status, undefined, 'no server, nothing to read');
  });
});

describe('GET /ha on a replica between two HA cycles (real PostgreSQL)', { timeout: 180_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    // A long loop_wait: the loop's own snapshot stays old for the whole case.
    cluster = await startCluster({ members: 2, ttl: 60, loopWait: 30, retryTimeout: 10, scope: 'livewal' });
  });

  after(async () => {
    await cluster?.stop();
  });

  it('shows WAL the replica received after the last cycle, as a switchover check needs', async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    const standby = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor(
      'the replica streams',
      async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length === 1,
      90_000,
    );
    await cluster.waitFor(
      "the replica's loop has seen its server run",
      async () => ((await standby.get(HaNodePaths.ha)).json() as { state?: string }).state === 'running',
      90_000,
    );
    // A WAL switch moves the primary a whole segment on: the jump a backup or archive_timeout makes.
    await primary.query('CREATE TABLE IF NOT EXISTS livewal AS SELECT generate_series(1, 1000) AS id');
    const [{ lsn }] = await primary.query<{ lsn: string }>('SELECT pg_switch_wal(), pg_current_wal_flush_lsn()::text AS lsn');
    const target = parseLsn(lsn ?? '');
    assert.ok(target !== undefined && target > 0, `the primary's position: ${lsn}`);
    const received = await cluster.waitFor(
      'the replica received it',
      async () => {
        const [row] = await standby.query<{ lsn: string | null }>('SELECT pg_last_wal_receive_lsn()::text AS lsn');
        const position = row?.lsn ? parseLsn(row.lsn) : undefined;
        return position !== undefined && position >= target ? position : undefined;
      },
      10_000,
    );
    const started = Date.now();
    const doc = (await standby.get(HaNodePaths.ha)).json() as { xlog?: { received_location?: number } };
    assert.ok(Date.now() - started < 5_000);
    assert.ok(
      (doc.xlog?.received_location ?? 0) >= received,
      `received_location ${doc.xlog?.received_location} is what the server has (${received}), not the last cycle's`,
    );
  });
});
