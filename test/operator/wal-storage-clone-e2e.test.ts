import assert from 'node:assert/strict';
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { claimMountsUnder } from '../../local/node/claim-filesystems.js';
import { claimDirectory } from '../../local/node/volumes.js';
import { clusterDriver, viaSelector, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';

/**
 * spec.walStorage for data directories that initdb did not make (stand-in with claims of a real
 * size, the operator, real PostgreSQL and pgBackRest): a replica cloned into such a cluster, and a
 * cluster restored from a backup, have pg_wal as a link into their own WAL claim's volume, and
 * serve (the replica streams, the restored cluster has the rows and takes writes).
 */
const ns = 'default';
const logger = createLogger({ name: 'wal-storage-clone-e2e', level: process.env.LOG_LEVEL ?? 'silent' });
const ha = { ttl: 10, loopWait: 1, retryTimeout: 4 };
const repository = { name: 'local', volume: { size: '512Mi' } };

describe(
  'walStorage on cloned and restored members end to end (stand-in with real capacity, real PostgreSQL and pgBackRest)',
  { skip: process.getuid?.() !== 0 && 'claims of a real size need root', timeout: 600_000 },
  () => {
    let e2e: E2eStack;
    let source: ClusterDriver;

    before(async () => {
      e2e = await startE2eStack('wal-storage-clone', { logger, ipPrefix: '127.0.67' });
      source = clusterDriver(e2e.api, ns, 'walsrc', viaSelector);
    });

    after(async () => {
      await e2e?.close();
      if (e2e) assert.deepEqual(claimMountsUnder(`${e2e.dir}/node`), [], 'no claim volume left mounted');
    });

    const podHost = async (driver: ClusterDriver, pod: string): Promise<string> =>
      eventually(`${pod}'s address`, async () => (await driver.pods()).find((p) => p.metadata?.name === pod)?.status?.podIP, 30_000);

    /** pg_wal of the member's data directory is a link to a folder on the member's own WAL claim volume. */
    async function assertWalOnItsClaim(driver: ClusterDriver, pod: string): Promise<void> {
      const host = await podHost(driver, pod);
      const dataDir = (await driver.sql(host, 'SHOW data_directory'))[0]?.data_directory as string;
      const link = join(dataDir, 'pg_wal');
      assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a symbolic link`);
      const volume = claimDirectory(join(e2e.dir, 'node'), ns, `pgwal-${pod}`);
      assert.ok(realpathSync(link).startsWith(`${volume}/`), `${link} leads into ${volume} (it leads to ${realpathSync(link)})`);
      assert.ok(claimMountsUnder(join(e2e.dir, 'node')).includes(volume), 'the WAL claim is a volume of its own');
      assert.ok(
        readdirSync(join(volume, 'pg_wal')).some((name) => /^[0-9A-F]{24}$/.test(name)),
        'WAL segments are written on the WAL volume',
      );
    }

    it('a replica cloned into a cluster with walStorage keeps pg_wal on its WAL claim and streams', async () => {
      await source.create({
        instances: 2,
        ha,
        storage: { size: '256Mi' },
        walStorage: { size: '96Mi' },
        backup: { repositories: [repository], schedules: { immediate: true } },
      });
      await source.healthyWith(2, 240_000);
      await source.readPassword();
      // The rw Service may follow the primary a moment after Healthy (a retry, as a client's).
      await eventually(
        'the rows written through walsrc-rw',
        () => source.query('walsrc-rw', 'CREATE TABLE IF NOT EXISTS kept AS SELECT generate_series(1, 42) AS id'),
        60_000,
      );
      const replica = (await source.status()).members!.find((m) => m.role === 'replica')!.name;
      const replicaHost = await podHost(source, replica);
      await eventually(
        'the replica streaming and replaying the rows',
        async () => {
          const [receiver] = await source.sql(replicaHost, 'SELECT status FROM pg_stat_wal_receiver');
          const [rows] = await source.sql(replicaHost, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'kept'");
          return receiver?.status === 'streaming' && rows?.n === 1 ? true : undefined;
        },
        60_000,
      );
      assert.equal((await source.sql(replicaHost, 'SELECT count(*)::int AS n FROM kept'))[0]?.n, 42);
      await assertWalOnItsClaim(source, replica);
      await assertWalOnItsClaim(source, (await source.status()).currentPrimary!);
      // The defaults (80MB recycled, 1GB between checkpoints, 128MB kept for replicas) could fill a 96Mi volume: bounded from walStorage.size.
      const sizes = await source.sql(
        replicaHost,
        "SELECT current_setting('max_wal_size') AS max, current_setting('min_wal_size') AS min, current_setting('wal_keep_size') AS keep",
      );
      assert.deepEqual(sizes[0], { max: '48MB', min: '32MB', keep: '24MB' });
    });

    it('a cluster restored from a backup with walStorage has pg_wal on its WAL claim, the rows, and takes writes', async () => {
      await eventually(
        'a first backup of walsrc',
        async () => (((await source.status()) as { backup?: { backups?: number } }).backup?.backups ?? 0) >= 1 || undefined,
        240_000,
      );
      const [switched] = await source.query('walsrc-rw', 'SELECT pg_walfile_name(pg_switch_wal()) AS wal');
      await eventually(
        'the rows archived',
        async () => {
          const [row] = await source.query('walsrc-rw', 'SELECT last_archived_wal AS last FROM pg_stat_archiver');
          return typeof row?.last === 'string' && row.last >= String(switched!.wal) ? true : undefined;
        },
        120_000,
      );
      const copy = clusterDriver(e2e.api, ns, 'walcopy', viaSelector);
      await copy.create({
        instances: 1,
        ha,
        storage: { size: '256Mi' },
        walStorage: { size: '96Mi' },
        backup: { repositories: [repository] },
        bootstrap: { recovery: { source: { cluster: 'walsrc' }, repository: 'local' } },
      });
      await copy.healthyWith(1, 240_000);
      await copy.readPassword();
      const host = await podHost(copy, 'walcopy-0');
      // Writes once the restored primary takes them (it may still restart once after Healthy).
      await eventually('a write on the restored cluster', () => copy.sql(host, 'INSERT INTO kept VALUES (43)'), 60_000);
      assert.equal((await copy.sql(host, 'SELECT count(*)::int AS n FROM kept'))[0]?.n, 43);
      await assertWalOnItsClaim(copy, 'walcopy-0');
    });
  },
);
