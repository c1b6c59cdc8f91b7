import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { startReplica, type TestReplica } from '../../support/replica.js';
import { get, parseMetrics, sharedConfigFile, sharedConfigSubdir, startTestExporter, valueOf, type ParsedMetrics } from './helpers.js';

/** The metric's samples as {labels → value}. */
function samplesOf(metrics: ParsedMetrics, name: string): Array<{ labels: Record<string, string>; value: number }> {
  return (metrics.families.get(name)?.metrics ?? []).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }));
}

describe('the shared pg_exporter configuration against PostgreSQL 15', () => {
  let primary: TestPostgres;
  let replica: TestReplica;
  let idleInTransaction: import('pg').Client | undefined;

  before(async () => {
    primary = await startPostgres({ settings: { shared_preload_libraries: `'pg_stat_statements'`, max_wal_senders: 5, wal_level: 'replica' } });
    await primary.query('CREATE EXTENSION pg_stat_statements');
    await primary.query('CREATE DATABASE app');
    const app = await import('pg');
    const client = new app.default.Client({ connectionString: primary.urlFor('app') });
    await client.connect();
    await client.query(
      'CREATE TABLE items (id serial PRIMARY KEY, name text); INSERT INTO items (name) SELECT md5(i::text) FROM generate_series(1, 500) i; CREATE SEQUENCE s1; ANALYZE items',
    );
    await client.end();
    // An open transaction gives the pg_xact_age snapshot histogram one observation.
    idleInTransaction = new app.default.Client({ connectionString: primary.urlFor('app') });
    await idleInTransaction.connect();
    await idleInTransaction.query('BEGIN; SELECT 1');
    replica = await startReplica(primary);
  });

  after(async () => {
    await idleInTransaction?.end();
    await replica?.stop();
    await primary?.stop();
  });

  const scrapeTwice = async (url: string, config: string | undefined) => {
    const exporter = await startTestExporter({ url, ...(config ? { config } : {}) });
    try {
      await get(`${exporter.url}/metrics`);
      const second = parseMetrics((await get(`${exporter.url}/metrics`)).body);
      const perServer = new Map(exporter.exporter.servers().map((s) => [s.settings.datname, s.installed().map((r) => r.collector.branch)]));
      const errors = exporter.exporter.servers().flatMap((s) =>
        s
          .installed()
          .filter((r) => r.stats.error > 0)
          .map((r) => `${s.settings.datname}/${r.collector.branch}: ${r.lastErrorMessage()}`),
      );
      return { metrics: second, perServer, errors };
    } finally {
      await exporter.close();
    }
  };

  it('plans 38 collectors on the primary (plus 9 per discovered database) and runs them all without error', async () => {
    const { metrics, perServer, errors } = await scrapeTwice(primary.url, sharedConfigFile);
    assert.deepEqual(errors, []);
    const main = perServer.get('postgres') ?? [];
    assert.equal(main.length, 38, main.join(','));
    assert.ok(main.includes('pg_primary_only') && !main.includes('pg_replica_only'));
    assert.ok(main.includes('pg_query_13'), 'pg_stat_statements collector planned');
    assert.equal(perServer.get('app')?.length, 9, perServer.get('app')?.join(','));
    assert.equal(valueOf(metrics, 'pg_up'), 1);
    assert.equal(valueOf(metrics, 'pg_in_recovery'), 0);
    assert.ok(valueOf(metrics, 'pg_version') >= 150000 && valueOf(metrics, 'pg_version') < 160000);
    assert.ok(samplesOf(metrics, 'pg_exporter_query_scrape_error_count').every((s) => s.value === 0));
    const tables = samplesOf(metrics, 'pg_table_n_live_tup').filter((s) => s.labels.datname === 'app');
    assert.ok(
      tables.some((s) => s.value === 500),
      JSON.stringify(tables),
    );
    const infBucket = samplesOf(metrics, 'pg_xact_age_idle_seconds_bucket').find((s) => s.labels.datname === 'app' && s.labels.le === '+Inf');
    assert.equal(infBucket?.value, 1, 'one idle-in-transaction observation in the +Inf bucket');
    assert.equal(samplesOf(metrics, 'pg_xact_age_idle_seconds_count').find((s) => s.labels.datname === 'app')?.value, 1);
  });

  it('plans 38 collectors on a streaming replica, swapping the primary-only ones, without error', async () => {
    const { metrics, perServer, errors } = await scrapeTwice(replica.url, sharedConfigFile);
    assert.deepEqual(errors, []);
    const main = perServer.get('postgres') ?? [];
    assert.equal(main.length, 38, main.join(','));
    for (const branch of ['pg_replica_only', 'pg_recv_13', 'pg_recovery', 'pg_recovery_prefetch', 'pg_db_confl_15']) assert.ok(main.includes(branch), branch);
    assert.ok(!main.includes('pg_primary_only'));
    assert.equal(valueOf(metrics, 'pg_in_recovery'), 1);
    assert.equal(valueOf(metrics, 'pg_is_in_recovery'), 1);
  });

  it('loads the directory form the same way (priorities from file order)', async () => {
    const { perServer, errors } = await scrapeTwice(primary.url, sharedConfigSubdir);
    assert.deepEqual(errors, []);
    assert.equal(perServer.get('postgres')?.length, 38);
  });

  it('runs Keelson built-in collector set on the primary without error', async () => {
    const { metrics, perServer, errors } = await scrapeTwice(primary.url, undefined);
    assert.deepEqual(errors, []);
    const main = perServer.get('postgres') ?? [];
    for (const branch of [
      'pg',
      'pg_activity',
      'pg_repl',
      'pg_slot',
      'pg_wal',
      'pg_archiver',
      'pg_bgwriter_10',
      'pg_db',
      'pg_lock',
      'pg_setting',
      'pg_size',
      'pg_query',
      'pg_table',
    ])
      assert.ok(main.includes(branch), branch);
    assert.equal(valueOf(metrics, 'pg_up'), 1);
    assert.equal(samplesOf(metrics, 'pg_repl_replay_lsn').length, 1, 'the streaming replica shows up as a WAL sender');
    assert.ok(samplesOf(metrics, 'pg_table_n_live_tup').some((s) => s.labels.datname === 'app' && s.labels.relname === 'public.items' && s.value === 500));
    assert.ok(samplesOf(metrics, 'pg_setting_max_connections')[0].value > 0);
  });

  it('runs Keelson built-in collector set on the replica without error', async () => {
    const { metrics, perServer, errors } = await scrapeTwice(replica.url, undefined);
    assert.deepEqual(errors, []);
    assert.ok((perServer.get('postgres') ?? []).includes('pg_recv'));
    assert.equal(samplesOf(metrics, 'pg_recv_timeline')[0]?.value, 1);
    assert.equal(valueOf(metrics, 'pg_is_in_recovery'), 1);
  });
});
