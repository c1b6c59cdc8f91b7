import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { parameterValueProblem } from '../../../../api/postgres/pg-parameters.js';
import { buildServerConf, renderValue } from '../../../../sidecar/ha-node/postgres/conf.js';
import { writtenParameters } from '../../../../sidecar/ha-node/postgres/config-files.js';
import { isPostgresBool, settingValueProblem, type SettingRule } from '../../../../sidecar/ha-node/postgres/setting-rules.js';
import { catalogFrom, screenParameters, settingsCatalogSql, type SettingsCatalog } from '../../../../sidecar/ha-node/postgres/settings-catalog.js';
import { startPostgres, type TestPostgres } from '../../../support/postgres.js';

/**
 * The parameter rules against PostgreSQL 15 itself: for settings a session may change, the
 * server's own verdict (set_config in a rolled-back transaction) must match ours for every value.
 */
const cases: Record<string, (string | number | boolean)[]> = {
  work_mem: ['64MB', '1e+300', 'lots', '4096', 65536, '1e3', '1.5MB', '64mb', '64 MB', '0x100', '010', '10GB', '3TB', '-1', '63', '64MB x', '8kB', '1024B', ''],
  statement_timeout: ['5min', '1h', '30s', '100us', '1.5s', '5 min', '5m', '-1', '0', '2d', 'forever'],
  log_min_duration_statement: ['-1', '-2', '250', '250ms', '1e2', '1e+300', 'inf'],
  enable_seqscan: ['on', 'off', 'tr', 'yes', 'YES', '1', '2', 'of', 'o', 'maybe', true, false, 'TRUE', 'n'],
  synchronous_commit: ['local', 'remote_apply', 'TRUE', 'yes', 'maybe', '1', 'ON', 'Off'],
  cursor_tuple_fraction: ['0.5', '1e-7', '2', 'nan', 'lots', 'inf', 0.1, '.5', '-0.1'],
  vacuum_cost_delay: ['2ms', '0.5', '1s', '200ms', '2 ms', '2min'],
  application_name: ['x', '', 'a b'],
  temp_file_limit: ['-1', '1GB', '1TB', '1.5GB'],
};

describe('parameter values against PostgreSQL 15', { timeout: 120_000 }, () => {
  let server: TestPostgres;
  let client: pg.Client;
  let catalog: SettingsCatalog;

  before(async () => {
    server = await startPostgres();
    client = new pg.Client({ connectionString: server.url });
    await client.connect();
    catalog = catalogFrom((await client.query<SettingRule>(settingsCatalogSql)).rows);
  });
  after(async () => {
    await client?.end();
    await server?.stop();
  });

  async function serverAccepts(name: string, value: string | number | boolean): Promise<boolean> {
    await client.query('BEGIN');
    try {
      await client.query('SELECT set_config($1, $2, true)', [name, typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value)]);
      return true;
    } catch {
      return false;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  for (const [name, values] of Object.entries(cases)) {
    it(`${name}: the same verdict as the server for every value`, async () => {
      for (const value of values) {
        const ours = settingValueProblem(name, value, catalog.get(name));
        assert.equal(ours === undefined, await serverAccepts(name, value), `${name} = ${JSON.stringify(value)}: ours ${ours ?? 'accepted'}`);
      }
    });
  }

  it('names the reason', () => {
    assert.match(settingValueProblem('work_mem', 'lots', catalog.get('work_mem'))!, /is not an integer or a size with a unit such as "64MB"/);
    assert.match(settingValueProblem('work_mem', '1e+300', catalog.get('work_mem'))!, /exceeds the integer range/);
    assert.match(settingValueProblem('work_mem', '63', catalog.get('work_mem'))!, /outside the valid range 64 \.\. 2147483647 kB/);
    assert.match(settingValueProblem('statement_timeout', '5m', catalog.get('statement_timeout'))!, /invalid unit "m"/);
    assert.match(
      settingValueProblem('synchronous_commit', 'maybe', catalog.get('synchronous_commit'))!,
      /must be one of local, remote_write, remote_apply, on, off/,
    );
    assert.match(settingValueProblem('no_such_setting', 'x', catalog.get('no_such_setting'))!, /not a parameter this PostgreSQL server knows/);
    assert.equal(settingValueProblem('myext.anything', 'x', catalog.get('myext.anything')), undefined, 'a customized option is a placeholder');
    assert.match(settingValueProblem('block_size', '4096', catalog.get('block_size'))!, /cannot be set/);
    assert.match(settingValueProblem('shared_buffers', '1e3MB', catalog.get('shared_buffers')) ?? 'accepted', /accepted/);
  });

  it('refuses what no server loads, without a server', () => {
    assert.match(parameterValueProblem('a\nb')!, /control characters/);
    assert.match(parameterValueProblem('tab\there')!, /control characters/);
    assert.match(parameterValueProblem(1e300)!, /without an exponent/);
    assert.match(parameterValueProblem(Number.NaN)!, /finite/);
    assert.equal(parameterValueProblem(1_000_000), undefined);
    assert.equal(isPostgresBool('o'), false);
  });

  it('keeps the last good value of a refused parameter and passes the rest', () => {
    const screened = screenParameters({ work_mem: 'lots', application_name: 'a\nb', statement_timeout: '5s' }, { work_mem: '16MB' }, catalog);
    assert.deepEqual(screened.parameters, { work_mem: '16MB', statement_timeout: '5s' });
    assert.deepEqual(
      screened.rejected.map((r) => r.name),
      ['work_mem', 'application_name'],
    );
  });

  it('reads back the values of the postgresql.conf it wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-conf-'));
    try {
      const parameters = { work_mem: '16MB', search_path: `"$user", it's \\ here`, max_connections: 40, enable_seqscan: false };
      writeFileSync(join(dir, 'postgresql.conf'), buildServerConf({ listenAddress: '127.0.0.1', port: 5432, socketDir: '/run', clusterName: 'c', parameters }));
      const written = writtenParameters(dir);
      assert.deepEqual([written.work_mem, written.search_path, written.max_connections, written.enable_seqscan], ['16MB', parameters.search_path, '40', 'off']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('quotes a number the file grammar cannot hold bare', () => {
    assert.equal(renderValue(1e-7), "'1e-7'");
    assert.equal(renderValue(65536), '65536');
    assert.equal(renderValue("it's"), "'it''s'");
  });
});
