import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type TestCluster } from './harness.js';

/**
 * Slot retention bounded by max_slot_wal_keep_size (the operator sets it from spec.storage.size):
 * with its replica dead, the primary keeps writing WAL, and the dead member's slot stops holding
 * it once the bound is passed — pg_wal does not grow with what the replica missed.
 */
const mb = 1024 * 1024;
const bound = 32;

describe("ha-node: a dead replica's slot holds at most max_slot_wal_keep_size", { timeout: 240_000 }, () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'slotcap',
      env: {
        KEELSON_PG_PARAMETERS: JSON.stringify({
          fsync: false,
          shared_buffers: '32MB',
          max_connections: 40,
          max_slot_wal_keep_size: `${bound}MB`,
          max_wal_size: '64MB',
          min_wal_size: '32MB',
        }),
      },
    });
  });

  after(async () => {
    await cluster?.stop();
  });

  it('invalidates the slot of a stopped replica once it would keep more than the bound', async () => {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    const replica = cluster.members.find((m) => m !== primary)!;
    await cluster.waitFor('the replica streaming', async () => (await replica.status('/replica?replication_state=streaming')) === 200, 120_000);
    await replica.stop();
    const slot = await cluster.waitFor(
      "the dead replica's slot, inactive",
      async () => {
        const rows = await primary.query<{ slot_name: string; active: boolean }>(
          "SELECT slot_name, active FROM pg_replication_slots WHERE slot_type = 'physical'",
        );
        return rows.find((r) => !r.active)?.slot_name;
      },
      30_000,
    );
    const [setting] = await primary.query<{ max_slot_wal_keep_size: string }>('SHOW max_slot_wal_keep_size');
    assert.equal(setting?.max_slot_wal_keep_size, `${bound}MB`);
    await primary.query('CREATE TABLE churn (pad text)');
    const [start] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    // Over three times the bound in WAL: the slot would keep all of it without max_slot_wal_keep_size.
    for (let i = 0; i < 4 * bound; i += 1) {
      await primary.query('INSERT INTO churn SELECT repeat(md5(random()::text), 32) FROM generate_series(1, 1000)');
      if (i % 16 === 15) await primary.query('SELECT pg_switch_wal()');
    }
    const [written] = await primary.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS bytes', [start!.lsn]);
    assert.ok(Number(written!.bytes) >= 3 * bound * mb, `${written!.bytes} bytes of WAL written: more than the slot may keep`);
    await primary.query('CHECKPOINT');
    const [state] = await primary.query<{ wal_status: string | null; held: string | null; written: string }>(
      'SELECT wal_status, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text AS held, pg_current_wal_lsn()::text AS written FROM pg_replication_slots WHERE slot_name = $1',
      [slot],
    );
    // Lost (or dropped and made again by ha-node): it holds no more than the bound and a segment.
    assert.ok(
      state === undefined || state.held === null || Number(state.held) <= (bound + 16) * mb || state.wal_status === 'lost' || state.wal_status === 'unreserved',
      `the slot no longer keeps its WAL (${JSON.stringify(state)})`,
    );
    assert.ok(state === undefined || state.held === null || state.wal_status !== 'extended', 'not kept beyond max_wal_size by the slot');
  });
});
