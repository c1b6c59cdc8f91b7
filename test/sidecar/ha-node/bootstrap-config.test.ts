import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * bootstrapConfig (Patroni's bootstrap.dcs): the member that initialises a new cluster writes it
 * to the DCS and starts its first server with its parameters and client rules, so nothing waits
 * for a later PATCH /config and no restart follows.
 */
const bootstrapConfig = {
  failsafe_mode: true,
  primary_hang_timeout: 40,
  db: { parameters: { work_mem: '8MB', max_connections: '90' }, pg_hba: ['host all all 10.9.0.0/16 reject'] },
};

async function query(member: Member, text: string): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(text)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('ha-node bootstrapConfig', { timeout: 180_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;

  before(async () => {
    cluster = await startCluster({
      members: 1,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 3,
      scope: 'seeded',
      env: { KEELSON_BOOTSTRAP_CONFIG: JSON.stringify(bootstrapConfig) },
    });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('is the DCS configuration of the new cluster', async () => {
    const config = (await (await fetch(`${primary.apiUrl}/config`)).json()) as Record<string, unknown> & { db: Record<string, unknown> };
    assert.equal(config.failsafe_mode, true);
    assert.equal(config.primary_hang_timeout, 40);
    assert.deepEqual(config.db.parameters, bootstrapConfig.db.parameters);
    assert.deepEqual(config.db.pg_hba, bootstrapConfig.db.pg_hba);
    assert.equal(config.ttl, 8, 'keys it lacks come from the local settings');
  });

  it('the first server runs with its parameters and client rules, without a restart', async () => {
    assert.deepEqual(await query(primary, 'SHOW max_connections'), [{ max_connections: '90' }]);
    assert.deepEqual(await query(primary, 'SHOW work_mem'), [{ work_mem: '8MB' }]);
    assert.equal((await query(primary, "SELECT 1 FROM pg_hba_file_rules WHERE address = '10.9.0.0' AND auth_method = 'reject'")).length, 1);
    const state = (await (await fetch(primary.apiUrl)).json()) as { pending_restart?: boolean };
    assert.notEqual(state.pending_restart, true);
  });
});
