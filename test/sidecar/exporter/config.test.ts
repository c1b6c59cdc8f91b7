import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { builtinDocsModule, renderBuiltinDocsModule } from '../../../sidecar/exporter/collectors/builtin-data.js';
import { builtinCollectorDocs } from '../../../sidecar/exporter/collectors/builtin-docs.generated.js';
import { builtinCollectorSources, builtinOrigin } from '../../../sidecar/exporter/collectors/index.js';
import { loadCollectorConfig, parseCollectorSources } from '../../../sidecar/exporter/config/load.js';
import { CollectorConfigError, checkConstantLabels } from '../../../sidecar/exporter/config/validate.js';
import { planCollectors, type ServerFacts } from '../../../sidecar/exporter/scrape/planner.js';
import { sharedConfigFile, sharedConfigSubdir } from './helpers.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const pg15 = (overrides: Partial<ServerFacts> = {}): ServerFacts => ({
  version: 150018,
  inRecovery: false,
  datname: 'postgres',
  username: 'postgres',
  databases: ['postgres', 'app'],
  schemas: ['public', 'pg_catalog', 'information_schema'],
  extensions: ['plpgsql', 'pg_stat_statements'],
  forked: false,
  pgbouncer: false,
  serverTags: [],
  ...overrides,
});

const dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function loadText(text: string, name = 'broken.yml'): unknown {
  const file = join(dir, name);
  writeFileSync(file, text);
  try {
    return loadCollectorConfig(file);
  } catch (error) {
    return error;
  }
}

const valid = `
ok_collector:
  query: SELECT 1 AS v
  metrics:
    - v: { usage: GAUGE }
`;

describe('loading the shared pg_exporter configuration unchanged', () => {
  it('reads all 96 branches from the merged file and from the directory', () => {
    const file = loadCollectorConfig(sharedConfigFile);
    const directory = loadCollectorConfig(sharedConfigSubdir);
    assert.equal(file.collectors.length, 96);
    assert.equal(directory.collectors.length, 96);
    assert.deepEqual(file.collectors.map((c) => c.branch).sort(), directory.collectors.map((c) => c.branch).sort());
    const activity = directory.collectors.find((c) => c.branch === 'pg_activity');
    assert.ok(activity && activity.priority > 100, 'directory mode ranks priorities by file');
    assert.equal(file.collectors.find((c) => c.branch === 'pg_activity')?.priority, 0);
    const heartbeat = file.collectors.find((c) => c.branch === 'pg_heartbeat');
    assert.equal(heartbeat?.minVersion, 90100, 'leading-zero versions read as decimal');
    assert.equal(heartbeat?.predicateQueries.length, 1);
    assert.equal(file.collectors.filter((c) => c.skip).length, 6);
    assert.equal(file.collectors.filter((c) => c.fatal).length, 3);
    assert.equal(file.collectors.find((c) => c.branch === 'pg_activity')?.timeout, 0.1, 'default timeout 100 ms');
  });

  it('plans 38 collectors for a PostgreSQL 15 primary and 38 for a replica, 9 for a discovered database', () => {
    const { collectors } = loadCollectorConfig(sharedConfigFile);
    const primary = planCollectors(collectors, pg15()).installed.map((c) => c.branch);
    const replica = planCollectors(collectors, pg15({ inRecovery: true })).installed.map((c) => c.branch);
    const forked = planCollectors(collectors, pg15({ forked: true, datname: 'app' })).installed.map((c) => c.branch);
    assert.equal(primary.length, 38);
    assert.equal(replica.length, 38);
    assert.equal(forked.length, 9);
    assert.deepEqual(primary.filter((b) => !replica.includes(b)).sort(), ['pg_clustering', 'pg_indexing', 'pg_primary_only', 'pg_slot_14', 'pg_vacuuming_12']);
    for (const b of ['pg_replica_only', 'pg_recv_13', 'pg_recovery', 'pg_recovery_prefetch', 'pg_db_confl_15'])
      assert.ok(replica.includes(b) && !primary.includes(b), b);
    assert.equal(primary[0], 'pg_primary_only', 'fatal collectors run first');
    const withoutStatements = planCollectors(collectors, pg15({ extensions: ['plpgsql'] })).installed.map((c) => c.branch);
    assert.ok(!withoutStatements.includes('pg_query_13'), 'extension tag needs the extension');
  });

  it('applies --tag and not: tags, and skips the version check while the version is unknown', () => {
    const { collectors } = parseCollectorSources(
      [
        {
          file: 't.yml',
          text: `
a: { query: SELECT 1 AS v, tags: [ extra ], metrics: [ { v: { usage: GAUGE } } ] }
b: { query: SELECT 1 AS v, tags: [ "not:extra" ], metrics: [ { v: { usage: GAUGE } } ] }
c: { query: SELECT 1 AS v, min_version: 170000, metrics: [ { v: { usage: GAUGE } } ] }
d: { query: SELECT 1 AS v, tags: [ "dbname:app", "username:postgres" ], metrics: [ { v: { usage: GAUGE } } ] }
`,
        },
      ],
      't.yml',
      false,
    );
    const names = (facts: ServerFacts) =>
      planCollectors(collectors, facts)
        .installed.map((c) => c.branch)
        .sort();
    assert.deepEqual(names(pg15()), ['b']);
    assert.deepEqual(names(pg15({ serverTags: ['extra'] })), ['a']);
    assert.deepEqual(names(pg15({ version: 0, datname: 'app' })), ['b', 'c', 'd']);
  });
});

describe('Keelson built-in collector set', () => {
  it('is generated in parsed form from its YAML, and the generated file is current (npm run collectors)', () => {
    assert.equal(
      readFileSync(resolve(repoRoot, builtinDocsModule), 'utf8'),
      renderBuiltinDocsModule(),
      `${builtinDocsModule} is stale: run npm run collectors`,
    );
    const fromYaml = parseCollectorSources(builtinCollectorSources(), builtinOrigin, true);
    const fromDocs = parseCollectorSources(builtinCollectorDocs, builtinOrigin, true);
    assert.deepEqual(fromDocs, fromYaml);
  });

  it('loads through the same loader and covers the required areas on PostgreSQL 15', () => {
    const set = parseCollectorSources(builtinCollectorSources(), builtinOrigin, true);
    assert.deepEqual(set.warnings, []);
    const names = set.collectors.map((c) => c.name);
    for (const area of [
      'pg',
      'pg_activity',
      'pg_repl',
      'pg_slot',
      'pg_wal',
      'pg_archiver',
      'pg_bgwriter',
      'pg_checkpointer',
      'pg_db',
      'pg_table',
      'pg_lock',
      'pg_setting',
      'pg_size',
      'pg_query',
      'pg_recv',
    ]) {
      assert.ok(names.includes(area), area);
    }
    const primary = planCollectors(set.collectors, pg15()).installed.map((c) => c.branch);
    assert.ok(primary.includes('pg_query') && primary.includes('pg_bgwriter_10') && !primary.includes('pg_bgwriter_17') && !primary.includes('pg_recv'));
    assert.ok(planCollectors(set.collectors, pg15({ inRecovery: true })).installed.some((c) => c.branch === 'pg_recv'));
  });
});

describe('bad configuration gives errors naming the file, the collector and the field', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['invalid YAML', 'a: [unclosed\n', /broken\.yml: invalid YAML/],
    ['missing query', 'c1:\n  metrics: [ { v: { usage: GAUGE } } ]\n', /broken\.yml: collector "c1": field "query": is required/],
    ['bad usage', 'c2:\n  query: SELECT 1\n  metrics: [ { v: { usage: GAUGEY } } ]\n', /collector "c2": field "metrics\[0\]\.v\.usage": must be one of/],
    ['negative ttl', 'c3:\n  query: SELECT 1\n  ttl: -1\n  metrics: [ { v: { usage: GAUGE } } ]\n', /collector "c3": field "ttl": must not be negative/],
    ['no value column', 'c4:\n  query: SELECT 1\n  metrics: [ { v: { usage: LABEL } } ]\n', /collector "c4": field "metrics": needs at least one GAUGE/],
    [
      'duplicate column',
      'c5:\n  query: SELECT 1\n  metrics: [ { v: { usage: GAUGE } }, { v: { usage: COUNTER } } ]\n',
      /collector "c5": field "metrics\[1\]\.v": duplicate column/,
    ],
    [
      'invalid label name',
      'c6:\n  query: SELECT 1\n  metrics: [ { "bad-name": { usage: LABEL } }, { v: { usage: GAUGE } } ]\n',
      /collector "c6": field "metrics\[0\]\.bad-name": "bad-name" is not a valid label name/,
    ],
    [
      'unsorted buckets',
      'c7:\n  query: SELECT 1\n  metrics: [ { v: { usage: HISTOGRAM, bucket: [3, 1] } } ]\n',
      /collector "c7": field "metrics\[0\]\.v\.bucket": bounds must be strictly increasing/,
    ],
    [
      'le label with histogram',
      'c8:\n  query: SELECT 1\n  metrics: [ { le: { usage: LABEL } }, { v: { usage: HISTOGRAM, bucket: [1] } } ]\n',
      /collector "c8": field "metrics": a label named "le"/,
    ],
    [
      'derived name collision',
      'c9:\n  query: SELECT 1\n  metrics: [ { v: { usage: HISTOGRAM, bucket: [1] } }, { v_count: { usage: GAUGE } } ]\n',
      /collector "c9": field "metrics\[1\]\.v_count": metric name "c9_v_count" collides/,
    ],
    [
      'bad scale',
      'c10:\n  query: SELECT 1\n  metrics: [ { v: { usage: GAUGE, scale: lots } } ]\n',
      /collector "c10": field "metrics\[0\]\.v\.scale": must be a number/,
    ],
    [
      'max below min',
      'c11:\n  query: SELECT 1\n  min_version: 150000\n  max_version: 140000\n  metrics: [ { v: { usage: GAUGE } } ]\n',
      /collector "c11": field "max_version"/,
    ],
    ['not a map', 'c12: just a string\n', /collector "c12": must be a map/],
    ['empty metrics', 'c13:\n  query: SELECT 1\n  metrics: []\n', /collector "c13": field "metrics": is required/],
  ];
  for (const [title, text, pattern] of cases) {
    it(title, () => {
      const error = loadText(text);
      assert.ok(error instanceof CollectorConfigError, `expected an error, got ${String(error)}`);
      assert.match(error.message, pattern);
    });
  }

  it('a broken file in a directory fails the whole load and names that file', () => {
    const sub = mkdtempSync(join(dir, 'd-'));
    writeFileSync(join(sub, '01-ok.yml'), valid);
    writeFileSync(join(sub, '02-bad.yml'), 'c20:\n  query: ""\n  metrics: [ { v: { usage: GAUGE } } ]\n');
    assert.throws(() => loadCollectorConfig(sub), /02-bad\.yml: collector "c20": field "query"/);
  });

  it('a missing path and an empty file are errors', () => {
    assert.throws(() => loadCollectorConfig(join(dir, 'nope.yml')), /nope\.yml: cannot read: ENOENT/);
    assert.ok(loadText('', 'empty.yml') instanceof CollectorConfigError);
  });

  it('unknown fields are warnings (pg_exporter ignores them), not errors', () => {
    const set = loadText('c30:\n  query: SELECT 1 AS v\n  tll: 10\n  metrics: [ { v: { usage: gauge, colour: red } } ]\n', 'warn.yml');
    assert.ok(!(set instanceof Error));
    const warnings = (set as { warnings: string[] }).warnings;
    assert.ok(warnings.some((w) => w.includes('"tll"')) && warnings.some((w) => w.includes('"colour"')), warnings.join('; '));
  });

  it('constant labels may not collide with collector labels or self-metric labels', () => {
    const { collectors } = loadCollectorConfig(sharedConfigFile);
    assert.throws(() => checkConstantLabels(collectors, { datname: 'x' }, true), /collides with the exporter's own metrics/);
    assert.throws(
      () => checkConstantLabels(collectors, { state: 'x' }, true),
      /pg_exporter\.yml: collector "pg_[a-z0-9_]+": field "state": label "state" collides/,
    );
    assert.doesNotThrow(() => checkConstantLabels(collectors, { cluster: 'x' }, true));
  });
});
