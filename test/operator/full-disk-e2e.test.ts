import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { createLogger } from '../../lib/log.js';
import { HaNodePaths } from '../../lib/ports.js';
import { mergePatch } from '../../local/controllers/kube.js';
import { claimMountsUnder } from '../../local/node/claim-filesystems.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { haNodeJson } from '../support/ha-node-api.js';
import { clusterDriver, viaSelector, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';
import { superuserClient, verifyFullTo } from './cluster-tls.js';

/**
 * Full disks end to end (stand-in with claims of a real size, local node, operator, real
 * PostgreSQL): a 64Mi data volume filled by a steady writer. With auto-grow the writer never sees
 * a failed transaction; without it the primary stops taking writes, loses nothing it acknowledged,
 * and takes writes again once the claim is grown, on the same data directory. Figures (time from
 * threshold to grown volume, the writer's longest stall) are printed, not asserted.
 */
const ns = 'default';
const logger = createLogger({ name: 'full-disk-e2e', level: process.env.LOG_LEVEL ?? 'silent' });
const mi = 1024 * 1024;
/** Small WAL bounds so the heap, not recycled WAL, fills the volume. */
const parameters = { max_wal_size: '48MB', min_wal_size: '32MB', checkpoint_timeout: '30s', checkpoint_completion_target: '0.5' };
const ha = { ttl: 10, loopWait: 1, retryTimeout: 4 };

interface WriterReport {
  acknowledged: number[];
  /** Transactions sent and not acknowledged. */
  failures: string[];
  /** Sessions that could not be opened (no transaction sent). */
  connectFailures: string[];
  longestStallMs: number;
}

/** Inserts rows of `rowBytes` one transaction each, every `pauseMs`, until `stop()`; never throws. */
function startWriter(host: string, password: string, rowBytes: number, pauseMs: number, ssl: ConnectionOptions) {
  const report: WriterReport = { acknowledged: [], failures: [], connectFailures: [], longestStallMs: 0 };
  let stopped = false;
  const done = (async () => {
    let client: pg.Client | undefined;
    let started: number | undefined;
    for (let id = 1; !stopped; id += 1) {
      started ??= Date.now();
      if (!client) {
        // A session that could not be opened (a slow TLS handshake on a loaded machine) is no
        // failed transaction: none was sent. Its time still counts as a stall.
        const opening = superuserClient(host, password, ssl, { connectMs: 10_000, queryMs: 20_000 });
        try {
          await opening.connect();
          client = opening;
        } catch (err) {
          report.connectFailures.push(`${(err as Error).message}`);
          report.longestStallMs = Math.max(report.longestStallMs, Date.now() - started);
          await opening.end().catch(() => undefined);
          await new Promise((r) => setTimeout(r, 500));
          id -= 1;
          continue;
        }
      }
      try {
        await client.query('INSERT INTO fill (id, pad) VALUES ($1, $2)', [id, 'x'.repeat(rowBytes)]);
        report.acknowledged.push(id);
      } catch (err) {
        report.failures.push(`${id}: ${(err as Error).message}`);
        await client?.end().catch(() => undefined);
        client = undefined;
        await new Promise((r) => setTimeout(r, 500));
      }
      report.longestStallMs = Math.max(report.longestStallMs, Date.now() - started);
      started = undefined;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    report,
    async stop(): Promise<WriterReport> {
      stopped = true;
      await done;
      return report;
    },
  };
}

interface VolumeView {
  capacity: number;
  used: number;
}

async function dataVolume(api: OperatorKubeApi, host: string): Promise<VolumeView | undefined> {
  const doc = (await haNodeJson(api, ns, host, HaNodePaths.ha)) as { volumes?: Array<{ volume: string; capacity_bytes: number; used_bytes: number }> };
  const data = doc.volumes?.find((v) => v.volume === 'data');
  return data ? { capacity: data.capacity_bytes, used: data.used_bytes } : undefined;
}

describe(
  'full data volumes end to end (stand-in with real capacity, real PostgreSQL)',
  { skip: process.getuid?.() !== 0 && 'claims of a real size need root', timeout: 600_000 },
  () => {
    let e2e: E2eStack;
    let api: OperatorKubeApi;

    before(async () => {
      e2e = await startE2eStack('full-disk', { logger, ipPrefix: '127.0.61' });
      ({ api } = e2e);
    });

    after(async () => {
      await e2e?.close();
      if (e2e) assert.deepEqual(claimMountsUnder(`${e2e.dir}/node`), [], 'no claim volume left mounted');
    });

    async function primaryHost(driver: ClusterDriver): Promise<string> {
      return eventually(
        'the primary address',
        async () => {
          const primary = (await driver.status()).currentPrimary;
          return (await driver.pods()).find((p) => p.metadata?.name === primary)?.status?.podIP;
        },
        60_000,
      );
    }

    async function prepare(
      name: string,
      storage: Record<string, unknown>,
      more: Record<string, unknown> = {},
    ): Promise<{ driver: ClusterDriver; host: string }> {
      const driver = clusterDriver(api, ns, name, viaSelector);
      await driver.create({ instances: 1, storage, ha, postgresql: { parameters }, ...more });
      await driver.healthyWith(1, 180_000);
      await driver.readPassword();
      const host = await primaryHost(driver);
      await driver.sql(host, 'CREATE TABLE fill (id integer PRIMARY KEY, pad text)');
      // Uncompressible rows: the volume fills by what is written.
      await driver.sql(host, 'ALTER TABLE fill ALTER COLUMN pad SET STORAGE EXTERNAL');
      return { driver, host };
    }

    it('auto-grow keeps a writer going with no failed transaction; figures: threshold to grown volume, longest stall', async () => {
      const { driver, host } = await prepare('grow', { size: '64Mi', autoGrow: { threshold: 75, step: '32Mi', max: '256Mi' } });
      const password = (await api.core.readNamespacedSecret({ namespace: ns, name: 'grow-superuser' })).data!.password!;
      const writer = startWriter(host, Buffer.from(password, 'base64').toString('utf8'), 64 * 1024, 100, await verifyFullTo(api, ns, 'grow', host));
      const growths: Array<{ from: number; to: number; thresholdToGrownMs: number }> = [];
      let crossedAt: number | undefined;
      let capacity = 64 * mi;
      try {
        await eventually(
          'two growths',
          async () => {
            const view = await dataVolume(api, host).catch(() => undefined);
            if (!view) return undefined;
            const now = Date.now();
            if (view.capacity > capacity) {
              growths.push({ from: capacity, to: view.capacity, thresholdToGrownMs: crossedAt ? now - crossedAt : Number.NaN });
              capacity = view.capacity;
              crossedAt = undefined;
            } else if (crossedAt === undefined && view.used / view.capacity >= 0.75) crossedAt = now;
            return growths.length >= 2 ? true : undefined;
          },
          300_000,
        );
      } finally {
        await writer.stop();
      }
      const report = writer.report;
      process.stderr.write(
        `# auto-grow: ${growths.map((g) => `${g.from / mi}Mi → ${g.to / mi}Mi in ${g.thresholdToGrownMs} ms from the threshold`).join('; ')}; ${report.acknowledged.length} transactions, longest stall ${report.longestStallMs} ms\n`,
      );
      assert.deepEqual(report.failures, [], `no transaction failed (sessions not opened: ${report.connectFailures.join(' | ') || 'none'})`);
      const rows = await driver.sql(host, 'SELECT count(*)::int AS n FROM fill');
      assert.equal(rows[0]?.n, report.acknowledged.length);
      const events = await driver.events();
      assert.ok(
        events.some((e) => e.reason === 'VolumeAutoGrow' && /pgdata-grow-0 64Mi → 96Mi: data volume \d+% used \(threshold 75%\)/.test(e.message ?? '')),
      );
      const status = await eventually(
        'status.members showing the grown volume',
        async () => {
          const s = await driver.status();
          return (s.members?.[0]?.volumes?.[0]?.capacityBytes ?? 0) >= 128 * mi ? s : undefined;
        },
        30_000,
      );
      assert.equal(status.conditions?.find((c) => c.type === 'VolumeAutoGrow')?.status, 'True');
      assert.match(status.diskUsage ?? '', /^grow-0 \d+%$/);
      assert.equal((await driver.sql(host, 'SHOW max_slot_wal_keep_size'))[0]?.max_slot_wal_keep_size, '16MB', 'slot retention bounded from spec.storage.size');
    });

    it('without auto-grow the primary stops taking writes, keeps what it acknowledged, and takes writes again once the claim is grown', async () => {
      const { driver, host } = await prepare('nogrow', { size: '64Mi' });
      const before = (await driver.sql(host, 'SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id;
      const password = (await api.core.readNamespacedSecret({ namespace: ns, name: 'nogrow-superuser' })).data!.password!;
      const writer = startWriter(host, Buffer.from(password, 'base64').toString('utf8'), 64 * 1024, 5, await verifyFullTo(api, ns, 'nogrow', host));
      let report: WriterReport;
      // ha-node's word while the volume fills (checkpoints may free some WAL afterwards).
      let warning: string | undefined;
      try {
        await eventually(
          'the writer refused and ha-node warning about the volume',
          async () => {
            if (!warning) {
              const doc = (await haNodeJson(api, ns, host, HaNodePaths.ha)) as {
                disk_warnings?: string[];
              };
              warning = doc.disk_warnings?.[0];
            }
            return writer.report.failures.length + writer.report.connectFailures.length >= 3 && warning ? true : undefined;
          },
          300_000,
        );
      } finally {
        report = await writer.stop();
      }
      assert.match(warning!, /^data volume \d+% used .*(nearly full|full)/);

      // Growing by hand (the spec's size): PostgreSQL comes back on the same data directory, and
      // takes more than the full volume could ever have held.
      const freeBefore = (await dataVolume(api, host))!;
      await api.custom.patchNamespacedCustomObject(
        { group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name: 'nogrow', body: { spec: { storage: { size: '128Mi' } } } },
        mergePatch,
      );
      const grownAt = Date.now();
      const rows = Math.ceil((freeBefore.capacity - freeBefore.used + 8 * mi) / (64 * 1024));
      await eventually(
        "a write larger than the old volume's free space taken",
        async () => {
          await driver.sql(
            host,
            `INSERT INTO fill (id, pad) SELECT -g, string_agg(md5(random()::text), '') FROM generate_series(1, $1) g, generate_series(1, 2048) s GROUP BY g`,
            [rows],
          );
          return true;
        },
        180_000,
      );
      process.stderr.write(
        `# no auto-grow: ${report.acknowledged.length} acknowledged before the volume filled; ${rows} rows of 64 KiB (more than the ${Math.round((freeBefore.capacity - freeBefore.used) / mi)} MiB free) taken ${Date.now() - grownAt} ms after the growth\n`,
      );
      const ids = new Set((await driver.sql(host, 'SELECT id FROM fill')).map((r) => r.id as number));
      assert.deepEqual(
        report.acknowledged.filter((id) => !ids.has(id)),
        [],
        'every acknowledged row is there',
      );
      const after = (await driver.sql(host, 'SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id;
      assert.equal(after, before, 'the same database system: no re-clone, no new initdb');
      const claim = await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'pgdata-nogrow-0' });
      assert.equal(claim.status?.capacity?.storage, '128Mi');
    });

    it('walStorage puts pg_wal on a claim of its own, reported as the wal volume and grown by walStorage.autoGrow', async () => {
      const { driver, host } = await prepare(
        'walvol',
        { size: '128Mi' },
        { walStorage: { size: '64Mi', autoGrow: { threshold: 60, step: '32Mi', max: '128Mi' } } },
      );
      const claim = await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'pgwal-walvol-0' });
      assert.equal(claim.status?.capacity?.storage, '64Mi');
      const volumes = async () =>
        (
          (await haNodeJson(api, ns, host, HaNodePaths.ha)) as {
            volumes?: Array<{ volume: string; capacity_bytes: number }>;
          }
        ).volumes ?? [];
      assert.deepEqual(
        (await volumes()).map((v) => [v.volume, v.capacity_bytes]),
        [
          ['data', 128 * mi],
          ['wal', 64 * mi],
        ],
      );
      // WAL the checkpoints keep (max_wal_size 48MB) passes 60% of 64Mi: the WAL claim grows, the data claim does not.
      await driver.sql(host, 'CREATE TABLE churn (pad text)');
      await eventually(
        'the WAL claim grown',
        async () => {
          await driver.sql(host, 'INSERT INTO churn SELECT repeat(md5(random()::text), 32) FROM generate_series(1, 2000)');
          await driver.sql(host, 'TRUNCATE churn');
          const grown = await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'pgwal-walvol-0' });
          return grown.status?.capacity?.storage === '96Mi' ? true : undefined;
        },
        180_000,
      );
      assert.ok(
        (await driver.events()).some(
          (e) => e.reason === 'VolumeAutoGrow' && /^pgwal-walvol-0 64Mi → 96Mi: wal volume \d+% used \(threshold 60%\)$/.test(e.message ?? ''),
        ),
      );
      assert.equal(
        (await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'pgdata-walvol-0' })).spec?.resources?.requests?.storage,
        '128Mi',
      );
      assert.equal((await driver.sql(host, 'SHOW max_slot_wal_keep_size'))[0]?.max_slot_wal_keep_size, '16MB', 'a quarter of the WAL volume');
    });
  },
);
