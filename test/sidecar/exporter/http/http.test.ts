import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve } from '../../../../lib/http.js';
import { HealthProbe } from '../../../../sidecar/exporter/http/health.js';
import { createExporterApp } from '../../../../sidecar/exporter/http/app.js';
import { createExporterListener, type RouteSettings } from '../../../../sidecar/exporter/http/routes.js';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';
import { get, parseMetrics, quietLogger, startTestExporter, valueOf, type ParsedMetrics } from '../helpers.js';

type Running = Awaited<ReturnType<typeof startTestExporter>>;

const samples = (m: ParsedMetrics, name: string) => (m.families.get(name)?.metrics ?? []).map((x) => ({ labels: x.labels ?? {}, value: Number(x.value) }));
const selfStat = (m: ParsedMetrics, name: string, query: string) => samples(m, `pg_exporter_query_scrape_${name}`).find((s) => s.labels.query === query)?.value;

const baseConfig = `
probe:
  name: probe
  query: SELECT 7 AS answer, true AS flag, NULL::int AS missing, 2500 AS millis, 'x' AS dropped, now() AS at
  ttl: 0
  metrics:
    - answer:  { usage: GAUGE, description: the answer }
    - flag:    { usage: GAUGE, description: a boolean }
    - missing: { usage: GAUGE, default: 3, scale: 2, description: NULL with a default }
    - millis:  { usage: GAUGE, rename: seconds, scale: 1e-3, description: renamed and scaled }
    - dropped: { usage: DISCARD }
    - at:      { usage: GAUGE, description: a timestamp }

probe_extra:
  name: probe
  desc: shares the namespace of "probe", so its self-metric series would repeat
  query: SELECT 8 AS extra
  ttl: 0
  metrics:
    - extra: { usage: GAUGE }

cached:
  query: SELECT nextval('keelson_cached') AS value
  ttl: 60
  metrics:
    - value: { usage: COUNTER, description: a sequence read behind a 60 s cache }

slow:
  query: SELECT pg_sleep(3) AS v
  timeout: 0.2
  ttl: 0
  metrics:
    - v: { usage: GAUGE }

broken:
  query: SELECT 1/0 AS v
  ttl: 0
  metrics:
    - v: { usage: GAUGE }

gated:
  query: SELECT 1 AS v
  ttl: 0
  predicate_queries:
    - name: gate table exists
      predicate_query: SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'keelson_gate')
  metrics:
    - v: { usage: GAUGE }

labelled:
  query: SELECT 'a"b\\c' AS tricky, 1 AS v UNION ALL SELECT 'plain', 2
  ttl: 0
  metrics:
    - tricky: { usage: LABEL }
    - v:      { usage: GAUGE }
`;

const sharedScrape = `
together:
  query: SELECT nextval('keelson_shared') AS value, pg_sleep(0.3) IS NULL AS slept
  ttl: 0
  timeout: 2
  metrics:
    - value: { usage: GAUGE }
    - slept: { usage: DISCARD }
`;

describe('exporter HTTP API and collection behaviour', () => {
  let pg: TestPostgres;
  let dir: string;
  let configFile: string;
  let exporter: Running;

  before(async () => {
    pg = await startPostgres();
    await pg.query('CREATE SEQUENCE keelson_cached; CREATE SEQUENCE keelson_shared');
    dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-http-'));
    configFile = join(dir, 'collectors.yml');
    writeFileSync(configFile, baseConfig);
    exporter = await startTestExporter({ url: pg.url, config: configFile, label: 'env=test,cluster=c1', 'auto-discovery': 'false' });
  });

  after(async () => {
    await exporter?.close();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/metrics is valid exposition text with conversions as pg_exporter does them', async () => {
    const response = await get(`${exporter.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const m = parseMetrics(response.body);
    assert.equal(valueOf(m, 'probe_answer'), 7);
    assert.equal(valueOf(m, 'probe_extra'), 8, 'two branches may share a namespace');
    assert.equal(
      samples(m, 'pg_exporter_query_scrape_total_count').filter((x) => x.labels.query === 'probe').length,
      1,
      'their self-metric series appear once',
    );
    assert.equal(valueOf(m, 'probe_flag'), 1);
    assert.equal(valueOf(m, 'probe_missing'), 6, 'default × scale');
    assert.equal(valueOf(m, 'probe_seconds'), 2.5, 'rename and scale');
    assert.ok(!m.families.has('probe_dropped'));
    assert.ok(Math.abs(valueOf(m, 'probe_at') - Date.now() / 1000) < 60, 'timestamps become epoch seconds, unscaled');
    assert.equal(m.families.get('cached_value')?.type, 'COUNTER');
    const tricky = samples(m, 'labelled_v')
      .map((s) => s.labels.tricky)
      .sort();
    assert.deepEqual(tricky, ['a"b\\c', 'plain'], 'label values are escaped and read back intact');
  });

  it('constant labels are on every sample, including self-metrics and process metrics', async () => {
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    let checked = 0;
    for (const family of m.families.values()) {
      if (family.type === 'HISTOGRAM' || family.type === 'SUMMARY') continue;
      for (const sample of family.metrics) {
        assert.equal(sample.labels?.env, 'test', `${family.name} lacks env`);
        assert.equal(sample.labels?.cluster, 'c1', `${family.name} lacks cluster`);
        checked++;
      }
    }
    assert.ok(checked > 50);
    const build = samples(m, 'pg_exporter_build_info')[0];
    for (const label of ['version', 'branch', 'revision', 'builddate', 'goversion', 'goos', 'goarch']) assert.ok(build.labels[label], label);
    assert.equal(build.value, 1);
  });

  it('pg_up, pg_version, pg_in_recovery and self-metrics are present', async () => {
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.equal(valueOf(m, 'pg_up'), 1);
    assert.ok(valueOf(m, 'pg_version') >= 150000);
    assert.equal(valueOf(m, 'pg_in_recovery'), 0);
    assert.ok(valueOf(m, 'pg_exporter_scrape_duration') > 0);
    assert.ok(valueOf(m, 'pg_exporter_scrape_total_count') >= 1);
    assert.equal(valueOf(m, 'pg_exporter_last_scrape_error'), 0);
    assert.ok((selfStat(m, 'duration', 'probe') ?? -1) >= 0);
    assert.ok(
      samples(m, 'pg_exporter_query_scrape_predicate_skip_count').every((s) => s.labels.query === 'gated'),
      'skip count only for collectors with predicates',
    );
  });

  it('a TTL cache serves the same result until it expires; cache hits are counted', async () => {
    const first = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    const second = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.equal(valueOf(first, 'cached_value'), valueOf(second, 'cached_value'));
    assert.ok((selfStat(second, 'hit_count', 'cached') ?? 0) > (selfStat(first, 'hit_count', 'cached') ?? 0));
    const ttl = samples(second, 'pg_exporter_query_cache_ttl').find((s) => s.labels.query === 'cached')?.value ?? -1;
    assert.ok(ttl > 0 && ttl <= 60, `remaining ttl ${ttl}`);
  });

  it('query timeouts are enforced by the server and counted as errors, without failing the scrape', async () => {
    const started = Date.now();
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.ok(Date.now() - started < 2_500, 'the 3 s query was cut off');
    assert.equal(valueOf(m, 'pg_up'), 1);
    assert.ok(!m.families.has('slow_v'));
    const slow = exporter.exporter.main.installed().find((r) => r.collector.branch === 'slow');
    assert.match(slow?.lastErrorMessage() ?? '', /statement timeout.*57014/);
    const lingering = await pg.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3)%' AND state = 'active' AND pid <> pg_backend_pid()`,
    );
    assert.equal(lingering.rows[0].n, 0, 'no query left running on the server');
  });

  it('non-fatal SQL errors are counted and skipped; the rest of the scrape goes on', async () => {
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.ok(!m.families.has('broken_v'));
    assert.ok((selfStat(m, 'error_count', 'broken') ?? 0) >= 1);
    assert.equal(valueOf(m, 'probe_answer'), 7);
  });

  it('predicate queries skip a collector until they pass', async () => {
    let m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.ok(!m.families.has('gated_v'));
    assert.ok((samples(m, 'pg_exporter_query_scrape_predicate_skip_count').find((s) => s.labels.query === 'gated')?.value ?? 0) >= 1);
    await pg.query('CREATE TABLE keelson_gate (id int)');
    m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.equal(valueOf(m, 'gated_v'), 1);
    await pg.query('DROP TABLE keelson_gate');
  });

  it('/explain describes the installed collectors; /stat has one row per collector', async () => {
    const explain = await get(`${exporter.url}/explain`);
    assert.equal(explain.status, 200);
    assert.match(explain.headers.get('content-type') ?? '', /^text\/plain/);
    for (const branch of ['probe', 'cached', 'slow', 'broken', 'gated']) assert.match(explain.body, new RegExp(`# SYNOPSIS\\n#       ${branch}_\\*`));
    assert.match(
      explain.body,
      /# {7}TTL {8}60\n# {7}Priority {3}0\n# {7}Timeout {4}100ms\n# {7}Fatal {6}false\n# {7}Version {4}lower ~ higher\n# {7}Source {5}collectors\.yml/,
    );
    assert.match(explain.body, /# {7}Timeout {4}200ms/);
    assert.match(explain.body, /# SYNOPSIS\n# {7}probe\.probe_extra_\*/);
    const stat = await get(`${exporter.url}/stat`);
    assert.equal(stat.status, 200);
    const lines = stat.body.trim().split('\n');
    assert.deepEqual(lines[0].split(/\s+/), ['name', 'total', 'hit', 'error', 'skip', 'metric', 'ttl/s', 'duration/ms']);
    const cached =
      lines
        .find((l) => l.startsWith('cached '))
        ?.trim()
        .split(/\s+/) ?? [];
    assert.equal(cached.length, 8);
    assert.ok(Number(cached[1]) >= Number(cached[2]) && Number(cached[2]) >= 1, stat.body);
    assert.equal(lines.length, 1 + exporter.exporter.main.installed().length);
  });

  it('/reload: GET and POST reload (added and removed collectors take effect), other methods get 405', async () => {
    writeFileSync(configFile, `${baseConfig}\nadded:\n  query: SELECT 42 AS v\n  metrics:\n    - v: { usage: GAUGE }\n`);
    const post = await get(`${exporter.url}/reload`, { method: 'POST' });
    assert.equal(post.status, 200);
    assert.equal(post.body, 'server reloaded');
    assert.match((await get(`${exporter.url}/explain`)).body, /# SYNOPSIS\n# {7}added_\*/, '/explain shows the new plan right after the reload');
    assert.equal(exporter.exporter.main.installed().find((r) => r.collector.branch === 'probe')?.stats.total, 0, 'statistics restart with the new plan');
    assert.equal(valueOf(parseMetrics((await get(`${exporter.url}/metrics`)).body), 'added_v'), 42);
    writeFileSync(configFile, baseConfig);
    const getReload = await get(`${exporter.url}/reload`);
    assert.equal(getReload.status, 200);
    assert.equal(getReload.body, 'server reloaded');
    assert.ok(!parseMetrics((await get(`${exporter.url}/metrics`)).body).families.has('added_v'));
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const r = await get(`${exporter.url}/reload`, { method });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'GET, POST');
    }
  });

  it('/reload with a broken config answers 500 and keeps serving the old plan', async () => {
    writeFileSync(configFile, 'probe:\n  query: SELECT 1\n  ttl: soon\n  metrics:\n    - v: { usage: GAUGE }\n');
    const r = await get(`${exporter.url}/reload`, { method: 'POST' });
    assert.equal(r.status, 500);
    assert.match(r.body, /^fail to reload: .*collectors\.yml: collector "probe": field "ttl": must be a number/);
    unlinkSync(configFile);
    const missing = await get(`${exporter.url}/reload`, { method: 'POST' });
    assert.equal(missing.status, 500);
    assert.match(missing.body, /^fail to reload: .*cannot read: ENOENT/);
    assert.equal(valueOf(parseMetrics((await get(`${exporter.url}/metrics`)).body), 'probe_answer'), 7);
    writeFileSync(configFile, baseConfig);
  });

  it('recovers when its connections are terminated on the server', async () => {
    await get(`${exporter.url}/metrics`);
    const killed = await pg.query(`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name LIKE 'pg_exporter%'`);
    assert.ok(killed.rows[0].n >= 1, 'the exporter had connections to terminate');
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.equal(valueOf(m, 'pg_up'), 1, 'the very next scrape reconnects');
    assert.equal(valueOf(m, 'probe_answer'), 7);
  });

  it('unknown paths are 404; / is the landing page; /version names the build', async () => {
    assert.equal((await get(`${exporter.url}/readyness`)).status, 404);
    const version = await get(`${exporter.url}/version`);
    assert.equal(version.status, 200);
    assert.match(version.body, /^keelson exporter version \d+\.\d+\.\d+/);
    assert.equal((await get(`${exporter.url}/up`, { method: 'HEAD' })).status, 200, 'HEAD works for probes');
    const root = await get(`${exporter.url}/`);
    assert.equal(root.status, 200);
    assert.match(root.body, /<h1>PG Exporter<\/h1>/);
  });

  it('the listener answers /version and the health paths itself, exactly as the express app does (the liveness probe loads no express)', async () => {
    const health = new HealthProbe({ url: pg.url, intervalMs: 1000, timeoutMs: 100, logger: quietLogger() });
    const settings: RouteSettings = {
      exporter: exporter.exporter,
      health,
      telemetryPath: '/metrics',
      logger: quietLogger(),
      versionText: 'keelson exporter version 1.2.3\n',
      authScope: 'all',
      headers: { 'X-Extra': 'on' },
    };
    let appLoads = 0;
    const listener = createExporterListener(settings, async (routeSettings) => {
      appLoads++;
      return createExporterApp(routeSettings);
    });
    const fast = await serve(listener, { host: '127.0.0.1', port: 0, logger: quietLogger() });
    const app = await serve(createExporterApp(settings), { host: '127.0.0.1', port: 0, logger: quietLogger() });
    const answer = async (base: string, path: string, method: string) => {
      const r = await get(`${base}${path}`, { method, headers: { 'X-Request-ID': 'probe-1' } });
      return {
        status: r.status,
        body: r.body,
        type: r.headers.get('content-type'),
        length: r.headers.get('content-length'),
        id: r.headers.get('x-request-id'),
        extra: r.headers.get('x-extra'),
      };
    };
    try {
      for (const method of ['GET', 'HEAD']) {
        for (const path of ['/version', '/up', '/primary', '/replica']) {
          assert.deepEqual(await answer(fast.url, path, method), await answer(app.url, path, method), `${method} ${path}`);
        }
      }
      assert.equal(appLoads, 0, 'the express app was loaded for /version or a health path');
      // Paths express matches loosely (letter case, a trailing slash) still go to the app.
      assert.deepEqual(await answer(fast.url, '/version/', 'GET'), await answer(app.url, '/version/', 'GET'));
      assert.equal(appLoads, 1);
    } finally {
      await fast.close();
      await app.close();
    }
  });

  it('concurrent scrapes share one in-flight collection', async () => {
    const file = join(dir, 'shared.yml');
    writeFileSync(file, sharedScrape);
    const shared = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false', 'disable-intro': 'true' });
    try {
      const before = Number((await pg.query(`SELECT nextval('keelson_shared') AS v`)).rows[0].v);
      const bodies = await Promise.all(Array.from({ length: 5 }, () => get(`${shared.url}/metrics`)));
      const values = bodies.map((b) => valueOf(parseMetrics(b.body), 'together_value'));
      assert.equal(new Set(values).size, 1, `values ${values.join(',')}`);
      const afterValue = Number((await pg.query(`SELECT last_value FROM keelson_shared`)).rows[0].last_value);
      assert.equal(afterValue - before, 1, 'the query ran once for five requests');
      assert.equal(values[0], afterValue);
    } finally {
      await shared.close();
    }
  });

  it('--disable-cache runs every collector on every scrape; --disable-intro drops pg_up and self-metrics', async () => {
    const plain = await startTestExporter({ url: pg.url, config: configFile, 'auto-discovery': 'false', 'disable-cache': 'true', 'disable-intro': 'true' });
    try {
      const a = parseMetrics((await get(`${plain.url}/metrics`)).body);
      const b = parseMetrics((await get(`${plain.url}/metrics`)).body);
      assert.equal(valueOf(b, 'cached_value'), valueOf(a, 'cached_value') + 1);
      assert.ok(!a.families.has('pg_up') && !a.families.has('pg_exporter_scrape_duration'));
    } finally {
      await plain.close();
    }
  });

  it('--namespace renames the built-in metrics; --web.telemetry-path moves /metrics; several listen addresses serve alike', async () => {
    const renamed = await startTestExporter({
      url: pg.url,
      config: configFile,
      'auto-discovery': 'false',
      namespace: 'keelson',
      'web.telemetry-path': '/custom-metrics',
      'web.listen-address': ['127.0.0.1:0', '127.0.0.1:0'],
    });
    try {
      assert.equal(renamed.urls.length, 2);
      assert.equal((await get(`${renamed.urls[1]}/custom-metrics`)).status, 200);
      assert.equal((await get(`${renamed.url}/metrics`)).status, 404);
      const m = parseMetrics((await get(`${renamed.url}/custom-metrics`)).body);
      assert.equal(valueOf(m, 'keelson_up'), 1);
      assert.ok(m.families.has('keelson_exporter_scrape_duration') && !m.families.has('pg_up'));
    } finally {
      await renamed.close();
    }
  });

  it('auto-discovery follows --include-database / --exclude-database; --tag gates collectors', async () => {
    await pg.query('CREATE DATABASE disc_a');
    await pg.query('CREATE DATABASE disc_b');
    const file = join(dir, 'discovery.yml');
    writeFileSync(
      file,
      `perdb:\n  query: SELECT current_database() AS datname, 1 AS v\n  metrics:\n    - datname: { usage: LABEL }\n    - v: { usage: GAUGE }\ntagged:\n  query: SELECT 1 AS v\n  tags: [ cluster, special ]\n  metrics:\n    - v: { usage: GAUGE }\n`,
    );
    const databasesOf = async (flags: Record<string, unknown>) => {
      const running = await startTestExporter({ url: pg.url, config: file, ...flags });
      try {
        await get(`${running.url}/metrics`);
        const m = parseMetrics((await get(`${running.url}/metrics`)).body);
        return {
          scraped: samples(m, 'perdb_v')
            .map((x) => x.labels.datname)
            .sort(),
          tagged: m.families.has('tagged_v'),
        };
      } finally {
        await running.close();
      }
    };
    const all = await databasesOf({});
    assert.deepEqual(all.scraped, ['disc_a', 'disc_b', 'postgres']);
    assert.equal(all.tagged, false, 'a collector with an unknown tag needs --tag');
    assert.deepEqual((await databasesOf({ 'include-database': 'disc_a' })).scraped, ['disc_a', 'postgres']);
    assert.deepEqual((await databasesOf({ 'exclude-database': 'disc_b,postgres' })).scraped, ['disc_a', 'postgres']);
    const off = await databasesOf({ 'auto-discovery': 'false', tag: 'special' });
    assert.deepEqual(off.scraped, ['postgres']);
    assert.equal(off.tagged, true);
  });

  it('a failing fatal collector fails the scrape: pg_up 0 and no collector metrics', async () => {
    const file = join(dir, 'fatal.yml');
    writeFileSync(file, `${baseConfig}\nmust:\n  query: SELECT 1/0 AS v\n  fatal: true\n  metrics:\n    - v: { usage: GAUGE }\n`);
    const fatal = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    try {
      const m = parseMetrics((await get(`${fatal.url}/metrics`)).body);
      assert.equal(valueOf(m, 'pg_up'), 0);
      assert.equal(valueOf(m, 'pg_exporter_last_scrape_error'), 1);
      assert.ok(!m.families.has('probe_answer'));
      assert.equal(fatal.health.state, 'down', 'a failed scrape also marks the state down until the next probe');
    } finally {
      await fatal.close();
    }
  });

  it('before the first probe the state is unknown and every health path answers 503', async () => {
    const health = new HealthProbe({ url: pg.url, intervalMs: 1000, timeoutMs: 100, logger: quietLogger() });
    const app = createExporterApp({
      exporter: exporter.exporter,
      health,
      telemetryPath: '/metrics',
      logger: quietLogger(),
      versionText: 'v',
      authScope: 'all',
      headers: {},
    });
    const server = await serve(app, { host: '127.0.0.1', port: 0, logger: quietLogger() });
    try {
      for (const path of ['/up', '/health', '/liveness', '/readiness', '/read', '/primary', '/rw', '/replica', '/ro']) {
        const r = await get(`${server.url}${path}`);
        assert.equal(r.status, 503, path);
        assert.equal(r.body, 'unknown');
      }
    } finally {
      await server.close();
    }
  });
});
