import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCluster, type Member, type TestCluster } from './harness.js';

/**
 * A synchronous standby cut from the primary: its walreceiver is stopped (SIGSTOP), so the
 * primary's walsender keeps a 'streaming' row but gets no reply, as in a peers-only partition.
 * Non-strict mode: the primary drops the silent standby within about ttl and commits resume, even
 * with wal_sender_timeout set to a minute. Strict mode: commits wait, and the sync key names no
 * standby meanwhile (the operator reports NoSyncStandby from it).
 */
const user = 'silent-admin';
const password = 'silent-password';
const auth = { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
const ttl = 6;
/** Well below wal_sender_timeout (60 s), well above ttl: the drop must come from the standby's silence. */
const resumeDeadlineMs = 40_000;

async function patchConfig(member: Member, body: unknown): Promise<void> {
  const response = await fetch(`${member.apiUrl}/config`, { method: 'PATCH', headers: auth, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200, await response.text());
}

/** The standby's walreceiver process (its command line names it). */
function walReceiverPid(member: Member): number {
  const pid = member.dataDirPids().find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('walreceiver');
    } catch {
      return false;
    }
  });
  assert.ok(pid, `${member.name} has a walreceiver`);
  return pid;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Starts one INSERT on its own connection; `done` resolves with the milliseconds it took. */
async function timedInsert(member: Member, id: number): Promise<{ done: Promise<number> }> {
  const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 5000, query_timeout: 90_000 });
  client.on('error', () => undefined);
  await client.connect();
  const started = Date.now();
  const done = client
    .query('INSERT INTO acked VALUES ($1)', [id])
    .then(() => Date.now() - started)
    .finally(() => client.end().catch(() => undefined));
  return { done };
}

describe('ha-node with a silent synchronous standby', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let primary: Member;
  let standby: Member;
  let stopped: number | undefined;

  async function syncKey(): Promise<{ leader?: string; standbys: string[] }> {
    const annotations = (await cluster.leases()).find((l) => l.metadata?.name === `${cluster.scope}-sync`)?.metadata?.annotations ?? {};
    return { leader: annotations.leader, standbys: (annotations.sync_standby ?? '').split(',').filter(Boolean) };
  }

  async function standbyNamed(): Promise<boolean> {
    const key = await syncKey();
    return key.leader === primary.name && key.standbys.includes(standby.name);
  }

  before(async () => {
    cluster = await startCluster({
      members: 2,
      ttl,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'silent',
      env: { KEELSON_SYNCHRONOUS_MODE: 'true', KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password },
    });
    primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    standby = cluster.members.find((m) => m !== primary)!;
    await primary.query('CREATE TABLE acked (id int PRIMARY KEY)');
    await cluster.waitFor('the standby named synchronous', standbyNamed, 60_000);
  });

  after(async () => {
    if (stopped) signal(stopped, 'SIGCONT');
    await cluster?.stop();
  });

  it('derives the replication timeouts from ttl', async () => {
    const rows = await primary.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('wal_sender_timeout', 'wal_receiver_timeout', 'wal_receiver_status_interval') ORDER BY name",
    );
    assert.deepEqual(
      rows.map((r) => [r.name, r.setting]),
      [
        ['wal_receiver_status_interval', '1'],
        ['wal_receiver_timeout', String(ttl * 1000)],
        ['wal_sender_timeout', String(ttl * 1000)],
      ],
    );
  });

  it('non-strict: drops a standby that stopped replying and acknowledges commits again within about ttl', async () => {
    // A configured minute wins over the derived value: only the standby's silence can release the commit.
    await patchConfig(primary, { db: { parameters: { wal_sender_timeout: '60s' } } });
    await cluster.waitFor(
      'wal_sender_timeout of a minute',
      async () => (await primary.query<{ s: string }>("SELECT setting AS s FROM pg_settings WHERE name = 'wal_sender_timeout'"))[0]?.s === '60000',
      30_000,
    );
    await (
      await timedInsert(primary, 1)
    ).done;

    stopped = walReceiverPid(standby);
    signal(stopped, 'SIGSTOP');
    const insert = await timedInsert(primary, 2);
    const ms = await insert.done;
    process.stderr.write(`# walreceiver of the synchronous standby stopped: commit acknowledged after ${ms} ms (ttl ${ttl} s)\n`);
    assert.ok(ms < resumeDeadlineMs, `commit acknowledged after ${ms} ms (deadline ${resumeDeadlineMs} ms)`);
    const key = await syncKey();
    assert.deepEqual([key.leader, key.standbys], [primary.name, []], 'the silent standby left the sync key');
    const inPostgres = await primary.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
      [standby.name],
    );
    assert.equal(inPostgres[0]?.n, 1, 'its walsender is still there: the decision came from the missing replies');

    signal(stopped, 'SIGCONT');
    stopped = undefined;
    await cluster.waitFor('the standby named synchronous again', standbyNamed, 60_000);
  });

  it('strict: commits wait for the silent standby, the sync key names none meanwhile, and they complete when it replies', async () => {
    await patchConfig(primary, { synchronous_mode_strict: true });
    await cluster.waitFor(
      'strict names in force',
      async () => {
        const [row] = await primary.query<{ names: string }>("SELECT current_setting('synchronous_standby_names') AS names");
        return row?.names.includes(standby.name) === true && (await standbyNamed());
      },
      30_000,
    );
    stopped = walReceiverPid(standby);
    signal(stopped, 'SIGSTOP');
    const insert = await timedInsert(primary, 3);
    let finished = false;
    void insert.done.then(
      () => (finished = true),
      () => (finished = true),
    );
    await cluster.waitFor('the silent standby dropped from the sync key', async () => (await syncKey()).standbys.length === 0, resumeDeadlineMs);
    const view = (await primary.get('/cluster')).json() as { members?: { name: string; role: string }[] };
    assert.equal(
      view.members?.some((m) => m.role === 'sync_standby'),
      false,
      'no member reported as synchronous standby',
    );
    assert.equal(finished, false, 'strict mode: the commit still waits');
    signal(stopped, 'SIGCONT');
    stopped = undefined;
    const ms = await insert.done;
    assert.ok(ms > 0);
    const present = await primary.query<{ id: number }>('SELECT id FROM acked ORDER BY id');
    assert.deepEqual(
      present.map((r) => r.id),
      [1, 2, 3],
    );
  });
});
