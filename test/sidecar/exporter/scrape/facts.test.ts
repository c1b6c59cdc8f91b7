import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';
import { get, parseMetrics, startTestExporter, valueOf } from '../helpers.js';

const gauge = (name: string, tags: string[] = []): string => `
${name}:
  query: SELECT 1 AS v
  ttl: 0
  tags: [${tags.join(', ')}]
  metrics:
    - v: { usage: GAUGE }
`;

/** The server log's entries (one per logged message; an entry may span lines). */
function logEntries(pg: TestPostgres): string[] {
  return readFileSync(join(pg.baseDir, 'server.log'), 'utf8').split(/\n(?=\d{4}-\d\d-\d\d )/);
}

describe('exporter reads the server’s facts with the collectors', () => {
  let pg: TestPostgres;
  let dir: string;

  before(async () => {
    pg = await startPostgres({ settings: { log_statement: `'all'` } });
    dir = mkdtempSync(join(tmpdir(), 'keelson-facts-'));
  });

  after(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('once planned, the facts travel in the first connection’s batch, and batched queries are prepared once per connection', async () => {
    const file = join(dir, 'gauges.yml');
    writeFileSync(file, ['f1', 'f2', 'f3', 'f4'].map((name) => gauge(name)).join(''));
    const running = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    const logged = logEntries(pg).length;
    try {
      for (let scrape = 0; scrape < 4; scrape++) {
        const m = parseMetrics((await get(`${running.url}/metrics`)).body);
        assert.equal(valueOf(m, 'pg_up'), 1);
        for (const name of ['f1', 'f2', 'f3', 'f4']) assert.equal(m.families.get(`${name}_v`)?.metrics[0]?.value, '1', `scrape ${scrape}: ${name}`);
      }
    } finally {
      await running.close();
    }
    // The exporter's messages (the health probe's own query aside), with the backend that ran each.
    const messages = logEntries(pg)
      .slice(logged)
      .map((entry) => ({ pid: /\[(\d+)\] LOG: {2}statement: /.exec(entry)?.[1], text: entry.replace(/^.*?statement: /, '') }))
      .filter((m): m is { pid: string; text: string } => m.pid !== undefined && !m.text.startsWith('SELECT pg_catalog.pg_is_in_recovery()'));
    assert.ok(messages[0].text.includes('current_catalog') && !messages[0].text.includes('1 AS v'), 'before the first plan, the facts come alone');
    const batches = messages.slice(1);
    assert.equal(batches.length, 8, `four scrapes, two connections each: ${JSON.stringify(batches.map((m) => `${m.pid} ${m.text.slice(0, 40)}`))}`);
    assert.ok(
      batches.every((m) => !m.text.includes('current_catalog') || m.text.includes('PREPARE')),
      'the facts are never sent alone again',
    );
    const factsName = /PREPARE (\w+) AS SELECT current_setting/.exec(batches.map((m) => m.text).join('\n'))?.[1];
    assert.equal(batches.filter((m) => m.text.includes(`EXECUTE ${factsName}`)).length, 3, 'each planned scrape reads the facts in a batch');
    const prepared = batches.flatMap((m) => [...m.text.matchAll(/PREPARE (\w+) AS/g)].map((match) => `${m.pid}:${match[1]}`));
    assert.equal(new Set(prepared).size, prepared.length, `a connection prepares each statement once: ${prepared.join(', ')}`);
    assert.ok(
      batches.slice(-2).every((m) => !m.text.includes('PREPARE')),
      'the last scrape only executes',
    );
  });

  it('a server that comes back in recovery is planned again within the same scrape', async () => {
    const file = join(dir, 'roles.yml');
    writeFileSync(file, gauge('on_primary', ['primary']) + gauge('on_replica', ['replica']) + gauge('anywhere') + gauge('anywhere_too'));
    const running = await startTestExporter({ url: pg.url, config: file, 'auto-discovery': 'false' });
    try {
      let m = parseMetrics((await get(`${running.url}/metrics`)).body);
      assert.ok(m.families.has('on_primary_v') && !m.families.has('on_replica_v'), 'a primary runs the primary’s collectors');
      await pg.stopServer();
      writeFileSync(join(pg.dataDir, 'standby.signal'), '');
      await pg.start();
      m = parseMetrics((await get(`${running.url}/metrics`)).body);
      assert.equal(valueOf(m, 'pg_up'), 1);
      assert.ok(m.families.has('on_replica_v') && !m.families.has('on_primary_v'), 'the first scrape in recovery already runs the replica’s collectors');
      assert.equal(m.families.get('anywhere_v')?.metrics[0]?.value, '1');
      assert.equal(m.families.get('anywhere_too_v')?.metrics[0]?.value, '1');
    } finally {
      await running.close();
    }
  });

  it('a server that stops answering costs one connection attempt per connection, not one per collector', async () => {
    // A relay in front of PostgreSQL that can turn into a black hole: it accepts and never answers.
    let blackHole = false;
    let accepted = 0;
    const sockets = new Set<Socket>();
    const track = (socket: Socket): void => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    };
    const relay = createServer((client) => {
      accepted++;
      track(client);
      if (blackHole) return;
      const upstream = connect(pg.port, pg.host);
      track(upstream);
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const url = new URL(pg.url);
    url.hostname = '127.0.0.1';
    url.port = String((relay.address() as AddressInfo).port);
    const names = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8'];
    const file = join(dir, 'many.yml');
    writeFileSync(file, names.map((name) => gauge(name)).join(''));
    const running = await startTestExporter({ url: url.toString(), config: file, 'auto-discovery': 'false', 'connect-timeout': '300' });
    try {
      for (let scrape = 0; scrape < 2; scrape++) assert.equal(valueOf(parseMetrics((await get(`${running.url}/metrics`)).body), 'pg_up'), 1);
      blackHole = true;
      for (const socket of sockets) socket.destroy();
      accepted = 0;
      const m = parseMetrics((await get(`${running.url}/metrics`)).body);
      assert.equal(valueOf(m, 'pg_up'), 0);
      assert.ok(!names.some((name) => m.families.has(`${name}_v`)));
      // Two connections and the facts' own try; a health probe may add one.
      assert.ok(accepted <= 4, `${accepted} connection attempts for ${names.length} collectors`);
    } finally {
      await running.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    }
  });
});
