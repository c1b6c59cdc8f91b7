import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { createLogger } from '../../lib/log.js';
import { HaNodePaths } from '../../lib/ports.js';
import { mergePatch } from '../../local/controllers/kube.js';
import { claimMountsUnder } from '../../local/node/claim-filesystems.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { haNodeGet, haNodeJson } from '../support/ha-node-api.js';
import { startS3, s3Credentials, type TestS3 } from '../support/s3.js';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.js';
import { clusterDriver, viaSelector, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';

/**
 * A full WAL volume on the primary while the repository is unreachable, end to end (stand-in with
 * claims of a real size, the operator, real PostgreSQL, pgBackRest and an S3 server behind a gate
 * the test shuts). Condition WalArchiving and the metrics of the archive-lag alert turn first,
 * while the volume has room; then the volume fills and PostgreSQL stops. Once the repository is
 * back and spec.walStorage.size grown, PostgreSQL comes back on the same data directory, every
 * row a writer was told was committed is there, and the archive has every segment from the first
 * to the last. Figures (headroom after the condition, time from the growth to writes) are printed.
 */
const ns = 'default';
const name = 'walfull';
const logger = createLogger({ name: 'wal-full-e2e', level: process.env.LOG_LEVEL ?? 'silent' });
const mi = 1024 * 1024;
/**
 * WalArchiving turns False after three archiveTimeouts (90 s). A busy primary switches segments
 * every archiveTimeout and a switch pads the segment to its full 16 MiB, so while the archive is
 * down the WAL volume takes about 16 MiB per archiveTimeout: 128Mi leaves room past the condition.
 */
const archiveTimeout = 30;
/**
 * wal_init_zero and wal_recycle off: the segment being written costs the volume only what was
 * written in it (tmpfs keeps files sparse), and no recycled segment waits full-size for reuse.
 */
const parameters = { max_wal_size: '48MB', min_wal_size: '32MB', wal_init_zero: 'off', wal_recycle: 'off', checkpoint_timeout: '30s' };

/** 2 MiB of uncompressible rows in one transaction. */
const bulkInsert = "INSERT INTO bulk SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 2048) s, generate_series(1, 32) g GROUP BY g";

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** WAL segment names in the S3 server's folder of objects (pgBackRest stores `<segment>-<sha1>[.ext]`). */
function archivedSegments(objectsDir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(objectsDir, { recursive: true }) as string[]) {
    const match = /(?:^|\/)([0-9A-F]{24})-[0-9a-f]{40}(?:\.[a-z0-9]+)?\._S3rver_object$/.exec(entry);
    if (match) found.push(match[1]!);
  }
  return [...new Set(found)].sort();
}

/** Position of a 16 MiB segment on its timeline (256 segments per log file). */
const segmentNumber = (segment: string): number => parseInt(segment.slice(8, 16), 16) * 256 + parseInt(segment.slice(16, 24), 16);

interface HaDocument {
  volumes?: Array<{ volume: string; capacity_bytes: number; used_bytes: number }>;
  disk_full?: boolean;
}

describe(
  'a full WAL volume with the repository unreachable, end to end (stand-in with real capacity, real PostgreSQL and pgBackRest)',
  { skip: process.getuid?.() !== 0 && 'claims of a real size need root', timeout: 900_000 },
  () => {
    let e2e: E2eStack;
    let api: OperatorKubeApi;
    let s3: TestS3;
    let gate: TcpGate;
    let driver: ClusterDriver;
    let host: string;

    before(async () => {
      s3 = await startS3();
      gate = await startTcpGate(s3.port);
      e2e = await startE2eStack('wal-full', { logger, ipPrefix: '127.0.66' });
      ({ api } = e2e);
      driver = clusterDriver(api, ns, name, viaSelector);
    });

    after(async () => {
      await e2e?.close();
      await gate?.close();
      await s3?.close();
      if (e2e) assert.deepEqual(claimMountsUnder(`${e2e.dir}/node`), [], 'no claim volume left mounted');
    });

    const condition = async (type: string): Promise<Condition | undefined> =>
      ((await driver.status()) as { conditions?: Condition[] }).conditions?.find((c) => c.type === type);
    const haDocument = async (): Promise<HaDocument> => await haNodeJson<HaDocument>(api, ns, host, HaNodePaths.ha);
    const walVolume = async () => (await haDocument()).volumes?.find((v) => v.volume === 'wal');

    it('WalArchiving and the archive-lag alert turn while the volume has room; grown after the repository is back, nothing is lost and the archive has no gap', async () => {
      await api.core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'walfull-s3' }, stringData: { accessKeyId: s3Credentials.key, secretAccessKey: s3Credentials.secretKey } },
      });
      await api.core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'walfull-s3-ca' }, stringData: { 'ca.crt': readFileSync(s3.caFile, 'utf8') } },
      });
      await driver.create({
        instances: 1,
        storage: { size: '256Mi' },
        walStorage: { size: '128Mi' },
        ha: { ttl: 10, loopWait: 1, retryTimeout: 4 },
        postgresql: { parameters },
        backup: {
          archiveTimeout,
          repositories: [
            {
              name: 's3',
              s3: {
                bucket: s3.bucket,
                endpoint: s3.endpoint,
                port: gate.port,
                uriStyle: 'path',
                path: s3.uniquePath('walfull'),
                caSecret: { name: 'walfull-s3-ca' },
                credentialsSecret: { name: 'walfull-s3' },
              },
            },
          ],
        },
      });
      await driver.healthyWith(1, 180_000);
      await driver.readPassword();
      host = await eventually('the primary address', async () => (await driver.pods()).find((p) => p.metadata?.name === `${name}-0`)?.status?.podIP, 30_000);
      const systemBefore = (await driver.sql(host, 'SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id;
      await driver.sql(host, 'CREATE TABLE acked (id integer PRIMARY KEY)');
      await driver.sql(host, 'CREATE TABLE bulk (pad text)');
      await eventually('WalArchiving=True', async () => ((await condition('WalArchiving'))?.status === 'True' ? true : undefined), 120_000);
      await eventually(
        'a segment archived',
        async () => ((await driver.sql(host, 'SELECT last_archived_wal FROM pg_stat_archiver'))[0]?.last_archived_wal ? true : undefined),
        120_000,
      );

      // A writer acknowledged row by row, from before the outage to after the growth.
      const acknowledged: number[] = [];
      let writing = true;
      const writer = (async () => {
        for (let id = 1; writing; id += 1) {
          try {
            await driver.sql(host, 'INSERT INTO acked VALUES ($1)', [id]);
            acknowledged.push(id);
          } catch {
            await new Promise((r) => setTimeout(r, 500));
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      })();

      try {
        // The repository becomes unreachable; the segment completed now waits in pg_wal.
        await gate.shut();
        await driver.sql(host, 'SELECT pg_switch_wal()');
        const piling = await eventually(
          'WalArchiving=False (WalPilingUp)',
          async () => {
            const c = await condition('WalArchiving');
            if (c?.status === 'False' && c.reason === 'WalPilingUp') return c;
            throw new Error(`WalArchiving is ${c ? `${c.status} (${c.reason}: ${c.message})` : 'not set'}`);
          },
          240_000,
        );
        const atCondition = (await walVolume())!;
        assert.ok(
          atCondition.used_bytes < 0.9 * atCondition.capacity_bytes,
          `the WAL volume has room when the condition turns (${atCondition.used_bytes} bytes used)`,
        );
        assert.match(piling.message, /^\d+ WAL segment\(s\) wait for the archiver, the oldest for \d+ s/);

        // The alert KeelsonWalArchiveLagging compares these two metrics; they cross now.
        const rules = (
          parse(readFileSync(new URL('../../monitoring/alerts.yaml', import.meta.url), 'utf8')) as {
            groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
          }
        ).groups.flatMap((g) => g.rules);
        assert.equal(
          rules.find((r) => r.alert === 'KeelsonWalArchiveLagging')?.expr.trim(),
          'ha_backup_archive_pending_age_seconds > on (namespace, scope, name) ha_backup_archive_timeout_seconds',
        );
        const metrics = (await haNodeGet(api, ns, host, HaNodePaths.metrics)).body;
        const metric = (metricName: string) => Number(new RegExp(`^${metricName}\\{[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
        assert.equal(metric('ha_backup_archive_timeout_seconds'), archiveTimeout);
        assert.ok(metric('ha_backup_archive_pending_age_seconds') > archiveTimeout, 'the oldest waiting segment is older than archiveTimeout');
        assert.ok(metric('ha_backup_archive_pending_segments') >= 1);

        // Bulk writes fill the WAL volume: PostgreSQL stops.
        const conditionAt = Date.now();
        await eventually(
          'the WAL volume full',
          async () => {
            await driver.sql(host, bulkInsert).catch(() => undefined);
            return (await haDocument().catch(() => undefined))?.disk_full ? true : undefined;
          },
          300_000,
        );
        process.stderr.write(`# WAL volume full ${Date.now() - conditionAt} ms after WalArchiving turned False (writing as fast as one client can)\n`);
        await eventually(
          'PostgreSQL refusing writes',
          async () =>
            (await driver.sql(host, bulkInsert).then(
              () => false,
              () => true,
            ))
              ? true
              : undefined,
          120_000,
        );
        // Stopped by the full volume, the primary still reports its queue: the condition keeps saying why.
        const queue = (await haNodeJson(api, ns, host, HaNodePaths.backup, 10_000)) as {
          archivePending?: { segments: number };
        };
        assert.ok((queue.archivePending?.segments ?? 0) >= 2, `GET /backup lists the waiting segments: ${JSON.stringify(queue.archivePending)}`);
        assert.equal((await condition('WalArchiving'))?.reason, 'WalPilingUp');

        // The repository is back, the WAL volume grown by the spec: PostgreSQL comes back.
        await gate.open();
        await api.custom.patchNamespacedCustomObject(
          { group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name, body: { spec: { walStorage: { size: '192Mi' } } } },
          mergePatch,
        );
        const grownAt = Date.now();
        await eventually(
          'writes taken again',
          async () =>
            await driver.sql(host, 'INSERT INTO bulk VALUES (NULL)').then(
              () => true,
              () => undefined,
            ),
          300_000,
        );
        process.stderr.write(`# writes taken again ${Date.now() - grownAt} ms after spec.walStorage.size went up\n`);
      } finally {
        writing = false;
        await writer;
      }
      const claim = await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: `pgwal-${name}-0` });
      assert.equal(claim.status?.capacity?.storage, '192Mi');
      assert.equal((await walVolume())?.capacity_bytes, 192 * mi);
      const systemAfter = (await driver.sql(host, 'SELECT system_identifier::text AS id FROM pg_control_system()'))[0]?.id;
      assert.equal(systemAfter, systemBefore, 'the same database system: no re-clone');
      const present = new Set((await driver.sql(host, 'SELECT id FROM acked')).map((r) => r.id as number));
      assert.deepEqual(
        acknowledged.filter((id) => !present.has(id)),
        [],
        'every acknowledged row is there',
      );
      assert.ok(acknowledged.length > 0);

      // Everything waiting is archived once the repository is reachable: no gap.
      const last = (await driver.sql(host, 'SELECT pg_walfile_name(pg_switch_wal()) AS wal'))[0]!.wal as string;
      await eventually(
        'the waiting WAL archived',
        async () => {
          const row = (await driver.sql(host, 'SELECT last_archived_wal AS wal FROM pg_stat_archiver'))[0];
          return typeof row?.wal === 'string' && row.wal >= last ? true : undefined;
        },
        240_000,
      );
      await eventually('WalArchiving=True again', async () => ((await condition('WalArchiving'))?.status === 'True' ? true : undefined), 120_000);
      const segments = archivedSegments(join(s3.dir, 'objects'));
      const numbers = segments.map(segmentNumber);
      const first = Math.min(...numbers);
      const missing: number[] = [];
      for (let n = first; n <= segmentNumber(last); n += 1) if (!numbers.includes(n)) missing.push(n);
      assert.deepEqual(missing, [], `no gap in the archive (${segments.length} segments, ${segments[0]} to ${segments.at(-1)})`);
      process.stderr.write(`# archive: ${segments.length} segments ${segments[0]}..${segments.at(-1)}, ${acknowledged.length} acknowledged rows all present\n`);
    });
  },
);
