import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BodyAssembler, bodyText } from '../../../../sidecar/exporter/http/body.js';
import { renderExposition, type RenderedFamily } from '../../../../sidecar/exporter/text/exposition.js';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';
import { get, parseMetrics, startTestExporter, valueOf } from '../helpers.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const family = (name: string, lines: string[], help = `${name} help`): RenderedFamily => ({ name, help, type: 'gauge', lines });
/** The fresh part as the exporter writes it: rendered families as bytes. */
const fresh = (...families: RenderedFamily[]): Buffer => Buffer.from(renderExposition(families));

describe('scrape body assembly', () => {
  it('keeps the collectors’ encoded text while their results are the same objects, and re-renders when one changes', () => {
    const assembler = new BodyAssembler(new Set(['pg_up']));
    const steady = family('a_value', ['a_value{x="1"} 1', 'a_value{x="2"} 2']);
    const moving = family('b_value', ['b_value 1']);
    const first = assembler.assemble([steady, moving], fresh(family('pg_up', ['pg_up 1'])));
    const second = assembler.assemble([steady, moving], fresh(family('pg_up', ['pg_up 0'])));
    assert.equal(second.cached, first.cached, 'same buffer: nothing re-rendered or re-encoded');
    assert.equal(valueOf(parseMetrics(bodyText(second)), 'pg_up'), 0, 'fresh part follows the scrape');
    const third = assembler.assemble([steady, family('b_value', ['b_value 2'])], fresh(family('pg_up', ['pg_up 1'])));
    assert.notEqual(third.cached, first.cached);
    const parsed = parseMetrics(bodyText(third));
    assert.equal(valueOf(parsed, 'b_value'), 2);
    assert.deepEqual([...parsed.families.keys()], ['a_value', 'b_value', 'pg_up']);
  });

  it('merges a collector family that uses a self-metric name into one family (first wins)', () => {
    const assembler = new BodyAssembler(new Set(['pg_up']));
    const body = assembler.assemble(
      [family('pg_up', ['pg_up{from="collector"} 5'], 'from a collector')],
      fresh(family('pg_up', ['pg_up 1', 'pg_up{from="collector"} 9'])),
    );
    assert.equal(body.cached.length, 0);
    const parsed = parseMetrics(bodyText(body));
    assert.equal(parsed.families.get('pg_up')?.help, 'from a collector');
    assert.deepEqual(
      parsed.families.get('pg_up')?.metrics.map((m) => m.value),
      ['5', '1'],
    );
  });
});

const config = `
steady:
  query: SELECT nextval('body_steady') AS value
  ttl: 60
  metrics:
    - value: { usage: COUNTER }

moving:
  query: SELECT nextval('body_moving') AS value
  ttl: 0
  metrics:
    - value: { usage: COUNTER }

sleepy:
  query: SELECT pg_sleep(0.4) IS NULL AS slept, 1 AS v
  ttl: 0
  timeout: 2
  metrics:
    - slept: { usage: DISCARD }
    - v: { usage: GAUGE }

pg:
  desc: a collector whose namespace makes it emit pg_up next to the exporter's own pg_up
  query: SELECT 42 AS up
  ttl: 60
  metrics:
    - up: { usage: GAUGE }
`;

describe('/metrics served from cached and fresh parts (real PostgreSQL)', () => {
  let pg: TestPostgres;
  let dir: string;
  let exporter: Awaited<ReturnType<typeof startTestExporter>>;

  before(async () => {
    pg = await startPostgres();
    await pg.query('CREATE SEQUENCE body_steady; CREATE SEQUENCE body_moving');
    dir = mkdtempSync(join(tmpdir(), 'keelson-exporter-body-'));
    writeFileSync(join(dir, 'collectors.yml'), config);
    writeFileSync(join(dir, 'web.yml'), 'http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n');
    exporter = await startTestExporter({
      url: pg.url,
      config: join(dir, 'collectors.yml'),
      'web.config.file': join(dir, 'web.yml'),
      'auto-discovery': 'false',
    });
  });

  after(async () => {
    await exporter?.close();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a cached collector keeps its value while one without a TTL moves on every scrape', async () => {
    const values = [];
    for (let i = 0; i < 3; i++) {
      const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
      values.push([valueOf(m, 'steady_value'), valueOf(m, 'moving_value')]);
    }
    assert.deepEqual(
      values.map(([steady]) => steady),
      [1, 1, 1],
    );
    assert.deepEqual(
      values.map(([, moving]) => moving),
      [1, 2, 3],
    );
  });

  it('answers with the length, the configured headers and the caller’s request id; HEAD and query strings work', async () => {
    const response = await get(`${exporter.url}/metrics?debug=1`, { headers: { 'X-Request-ID': 'scrape-42' } });
    assert.equal(response.status, 200);
    assert.equal(Number(response.headers.get('content-length')), Buffer.byteLength(response.body));
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('x-request-id'), 'scrape-42');
    const head = await get(`${exporter.url}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  it('a scraper that hangs up before the answer is written does not hurt the exporter', async () => {
    const hungUp = fetch(`${exporter.url}/metrics`, { signal: AbortSignal.timeout(100) });
    await assert.rejects(hungUp);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const after = await get(`${exporter.url}/metrics`);
    assert.equal(after.status, 200);
    assert.equal(valueOf(parseMetrics(after.body), 'sleepy_v'), 1);
  });

  it('a collector family named like a self-metric is merged into one valid family', async () => {
    const m = parseMetrics((await get(`${exporter.url}/metrics`)).body);
    assert.deepEqual(
      m.families.get('pg_up')?.metrics.map((s) => Number(s.value)),
      [42],
      'the collector’s series comes first and both have the same (empty) label set',
    );
  });
});

describe('young generation of the exporter process', () => {
  it('stays at its initial size under scrape-like garbage once the exporter has set its limit', () => {
    // A separate process, since the setting is process-wide; it allocates short-lived garbage
    // with some survivors, as scrapes do, and reports the size of V8's new space.
    const script = (limit: boolean) => `
      import v8 from 'node:v8';
      import { keepHeapSmall } from './sidecar/exporter/process/memory.ts';
      ${limit ? 'keepHeapSmall("", []);' : ''}
      const keep = [];
      for (let i = 0; i < 20000; i++) { const a = []; for (let j = 0; j < 100; j++) a.push({ j, s: 'x' + j }); if (i % 50 === 0) keep.push(a); if (keep.length > 40) keep.shift(); }
      process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
    const newSpace = (limit: boolean) =>
      Number(
        execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(limit)], {
          cwd: repoRoot,
          env: { ...process.env, NODE_OPTIONS: '' },
        }).toString(),
      );
    const limited = newSpace(true);
    const free = newSpace(false);
    assert.ok(limited <= 4 * 1024 * 1024, `limited new space ${limited} bytes`);
    assert.ok(free > limited, `without the limit V8 grows it (${free} bytes), so the test would notice if the flag stopped working`);
  });

  it('leaves hot functions unoptimised (TurboFan off) once the exporter has set its limits', () => {
    const script = (limit: boolean) => `
      import { keepHeapSmall } from './sidecar/exporter/process/memory.ts';
      ${limit ? 'keepHeapSmall("", []);' : ''}
      function hot(a, b) { return (a * 31 + b) % 1000003; }
      let x = 0;
      for (let i = 0; i < 3000000; i++) x = hot(x, i);
      const status = new Function('f', 'return %GetOptimizationStatus(f)')(hot);
      process.stdout.write(String(status & 16));`;
    const optimised = (limit: boolean) =>
      Number(
        execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script(limit)], {
          cwd: repoRoot,
          env: { ...process.env, NODE_OPTIONS: '' },
        }).toString(),
      );
    assert.equal(optimised(true), 0, 'hot function optimised despite the limit');
    assert.equal(optimised(false), 16, 'without the limit V8 optimises it, so the test would notice if the flag stopped working');
  });
});
