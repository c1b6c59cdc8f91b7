import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { get, parseMetrics, startTestExporter, valueOf } from './helpers.js';

// Each collector reports the backend that ran it and holds its connection for a moment.
const sleeper = (name: string): string => `
${name}:
  query: SELECT pg_backend_pid()::text AS pid, 1 AS v FROM pg_sleep(0.2)
  timeout: 2
  ttl: 0
  metrics:
    - pid: { usage: LABEL }
    - v:   { usage: GAUGE }
`;

describe('exporter runs uncached collectors on the pool’s connections side by side', () => {
  let pg: TestPostgres;
  let dir: string;

  before(async () => {
    pg = await startPostgres();
    await pg.query('CREATE SEQUENCE lanes_side_effect');
    dir = mkdtempSync(join(tmpdir(), 'keelson-lanes-'));
  });

  after(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the main server’s collectors run on two connections, and the body keeps the plan order', async () => {
    const file = join(dir, 'sleepers.yml');
    writeFileSync(file, ['s1', 's2', 's3', 's4'].map(sleeper).join(''));
    const running = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    try {
      const body = (await get(`${running.url}/metrics`)).body;
      const m = parseMetrics(body);
      assert.equal(valueOf(m, 'pg_up'), 1);
      const pids = new Set(['s1', 's2', 's3', 's4'].flatMap((name) => (m.families.get(`${name}_v`)?.metrics ?? []).map((x) => x.labels?.pid)));
      assert.equal(pids.size, 2, `collectors ran on backends ${[...pids].join(', ')}`);
      const planned = running.exporter.main.installed().map((r) => `# TYPE ${r.collector.name}_v `);
      const positions = planned.map((type) => body.indexOf(type));
      assert.ok(
        positions.every((p) => p >= 0),
        'every collector in the body',
      );
      assert.deepEqual(
        [...positions].sort((a, b) => a - b),
        positions,
        'families in plan order',
      );
    } finally {
      await running.close();
    }
  });

  it('collectors without predicates share one round trip per connection, and a failing one fails alone', async () => {
    // now() is the transaction's start: statements sent in one message share one implicit transaction.
    const stamped = (name: string): string => `
${name}:
  query: SELECT extract(epoch FROM now())::text AS started, 1 AS v
  ttl: 0
  metrics:
    - started: { usage: LABEL }
    - v:       { usage: GAUGE }
`;
    const names = ['t1', 't2', 't3', 't4', 't5', 't6'];
    const file = join(dir, 'stamped.yml');
    writeFileSync(file, `${names.map(stamped).join('')}\nbroken:\n  query: SELECT 1/0 AS v\n  ttl: 0\n  metrics:\n    - v: { usage: GAUGE }\n`);
    const running = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    try {
      for (let scrape = 0; scrape < 3; scrape++) {
        const m = parseMetrics((await get(`${running.url}/metrics`)).body);
        assert.equal(valueOf(m, 'pg_up'), 1);
        const starts = names.map((name) => m.families.get(`${name}_v`)?.metrics[0]?.labels?.started);
        assert.ok(
          starts.every((s) => s !== undefined),
          `scrape ${scrape}: every collector reports despite the broken one`,
        );
        assert.ok(!m.families.has('broken_v'));
        if (scrape > 0) assert.ok(new Set(starts).size <= 2, `scrape ${scrape}: ${new Set(starts).size} transactions for ${names.length} collectors`);
      }
    } finally {
      await running.close();
    }
  });

  it('a failing fatal collector stops the scrape before any other collector runs', async () => {
    const file = join(dir, 'fatal.yml');
    writeFileSync(
      file,
      `${sleeper('s1')}
effect:
  query: SELECT nextval('lanes_side_effect') AS n
  ttl: 0
  metrics:
    - n: { usage: GAUGE }

must:
  query: SELECT 1/0 AS v
  fatal: true
  metrics:
    - v: { usage: GAUGE }
`,
    );
    const running = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    try {
      const m = parseMetrics((await get(`${running.url}/metrics`)).body);
      assert.equal(valueOf(m, 'pg_up'), 0);
      const [{ last_value: lastValue, is_called: called }] = (await pg.query('SELECT last_value, is_called FROM lanes_side_effect')).rows as Array<{
        last_value: string;
        is_called: boolean;
      }>;
      assert.equal(called, false, `the side-effect collector ran (last value ${lastValue})`);
    } finally {
      await running.close();
    }
  });
});
