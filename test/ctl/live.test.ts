import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { after, before, describe, it } from 'node:test';
import type { Member, TestCluster } from '../sidecar/ha-node/harness.js';
import { repoRoot } from '../sidecar/ha-node/harness.js';
import { startOpsCluster } from '../sidecar/ha-node/ops/ops-cluster.js';
import { runCtl } from './ctl-runner.js';
import { runKeelson } from '../support/run-process.js';

const user = 'ops-admin';
const password = 'ops-password';
/** No case may hang for minutes: the runner fails it with its name after this long. */
const bounded = { timeout: 150_000 };
const basic = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * `keelson ctl` and the operations API against a live 3-member cluster (real PostgreSQL 15, real
 * ha-node processes, Lease DCS on the API server stand-in). Member 2 is tagged nofailover.
 */
describe('keelson ctl against a live 3-member cluster', () => {
  let cluster: TestCluster;
  let urls: string[] = [];

  /** `keelson ctl` in this process against the members' URLs (unless a test cleared them). */
  async function ctl(args: string[]): Promise<Result> {
    const started = performance.now();
    const result = await runCtl([...urls.flatMap((u) => ['--url', u]), ...args]);
    return { ...result, ms: performance.now() - started };
  }

  /** The real binary, for exit codes as a shell sees them. */
  async function ctlProcess(args: string[], env: Record<string, string> = {}): Promise<Result> {
    const started = performance.now();
    const { code, stdout, stderr } = await runKeelson(['ctl', ...urls.flatMap((u) => ['--url', u]), ...args], {
      cwd: repoRoot,
      env: { ...process.env, KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password, LOG_LEVEL: 'warn', ...env },
    });
    return { code, stdout, stderr, ms: performance.now() - started };
  }

  async function post(member: Member, path: string, body: unknown, auth = true): Promise<{ status: number; text: string }> {
    const response = await fetch(`${member.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: basic } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: response.status, text: await response.text() };
  }

  /** One primary and two streaming replicas; bootstrap under load may take longer than a test's own wait. */
  async function settled(timeoutMs = 45_000): Promise<Member> {
    const primary = await cluster.waitFor('a primary', () => cluster.primary(), timeoutMs);
    await cluster.waitFor(
      'two streaming replicas',
      async () => {
        const doc = (await primary.get('/cluster')).json() as { members: Array<{ state: string; role: string }> };
        return doc.members.filter((m) => m.role !== 'leader' && m.state === 'streaming').length === 2;
      },
      timeoutMs,
    );
    return primary;
  }

  before(async () => {
    process.env.KEELSON_API_USERNAME = user;
    process.env.KEELSON_API_PASSWORD = password;
    cluster = await startOpsCluster({
      scope: 'ctl',
      env: { KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password },
      memberOptions: [{}, {}, { tags: { nofailover: true } }],
    });
    urls = cluster.members.map((m) => m.apiUrl);
    await settled(150_000);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('list, topology and -o json|yaml show the three members', bounded, async () => {
    const table = await ctlProcess(['list']);
    assert.equal(table.code, 0, table.stderr);
    for (const m of cluster.members) assert.match(table.stdout, new RegExp(`\\| ${m.name} +\\|`));
    assert.match(table.stdout, /Leader/);
    assert.match(table.stdout, /nofailover: true/);
    const json = await ctl(['list', '-o', 'json']);
    const doc = JSON.parse(json.stdout) as { members: Array<{ name: string; role: string }> };
    assert.deepEqual(doc.members.map((m) => m.name).sort(), cluster.members.map((m) => m.name).sort());
    assert.equal(doc.members.filter((m) => m.role === 'leader').length, 1);
    const yaml = await ctl(['topology', '-o', 'yaml']);
    assert.match(yaml.stdout, /members:/);
    const topology = await ctl(['topology']);
    assert.equal((topology.stdout.match(/\| \+ /g) ?? []).length, 2, topology.stdout);
  });

  it('mutating endpoints need credentials; reads do not', bounded, async () => {
    const primary = (await cluster.primary())!;
    assert.equal((await post(primary, '/reload', {}, false)).status, 401);
    assert.equal((await primary.get('/config')).status, 200);
    const refused = await ctl(['--password', 'wrong', 'reload', '--force']);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /Failed \(HTTP 401\)/);
  });

  it("finds the members through the Kubernetes API (the cluster's Leases) without --url", bounded, async () => {
    const saved = urls;
    urls = [];
    try {
      const r = await ctl(['--cluster', 'ctl', '--namespace', 'default', '--kubeconfig', cluster.api.kubeconfigPath, 'list', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { members: unknown[] }).members.length, 3);
      const missing = await ctl(['--cluster', 'nope', '--kubeconfig', cluster.api.kubeconfigPath, 'list']);
      assert.equal(missing.code, 3);
      assert.match(missing.stderr, /no members of cluster "nope"/);
    } finally {
      urls = saved;
    }
  });

  it("without credential flags, takes the API credentials from the cluster's Secret", bounded, async () => {
    const saved = { urls, user: process.env.KEELSON_API_USERNAME, password: process.env.KEELSON_API_PASSWORD };
    urls = [];
    delete process.env.KEELSON_API_USERNAME;
    delete process.env.KEELSON_API_PASSWORD;
    const core = new k8s.KubeConfig();
    core.loadFromFile(cluster.api.kubeconfigPath);
    const secrets = core.makeApiClient(k8s.CoreV1Api);
    const target = ['--cluster', 'ctl', '--namespace', 'default', '--kubeconfig', cluster.api.kubeconfigPath];
    try {
      const refused = await ctl([...target, 'reload', '--force']);
      assert.equal(refused.code, 1, `no Secret yet, so no credentials: ${refused.stdout}${refused.stderr}`);
      assert.match(refused.stdout, /Failed \(HTTP 401\)/);
      await secrets.createNamespacedSecret({
        namespace: 'default',
        body: { metadata: { name: 'ctl-api' }, type: 'kubernetes.io/basic-auth', stringData: { username: user, password } },
      });
      const done = await ctl([...target, 'reload', '--force']);
      assert.equal(done.code, 0, `credentials from Secret ctl-api: ${done.stdout}${done.stderr}`);
      assert.doesNotMatch(done.stdout, /401/);
    } finally {
      urls = saved.urls;
      process.env.KEELSON_API_USERNAME = saved.user;
      process.env.KEELSON_API_PASSWORD = saved.password;
      await secrets.deleteNamespacedSecret({ name: 'ctl-api', namespace: 'default' }).catch(() => undefined);
    }
  });

  it('failover to the nofailover member is refused with 412 (and ctl exits 1)', bounded, async () => {
    let primary = await settled();
    if (primary === cluster.members[2]) {
      // The nofailover member may have bootstrapped the cluster; move the primary off it first.
      assert.equal((await post(primary, '/switchover', { leader: primary.name, candidate: cluster.members[0]!.name })).status, 200);
      primary = await settled();
    }
    const r = await post(primary, '/failover', { candidate: cluster.members[2]!.name });
    assert.equal(r.status, 412);
    assert.match(r.text, /^failover is not possible: no good candidates have been found/);
    const viaCtl = await ctlProcess(['failover', '--candidate', cluster.members[2]!.name, '--force']);
    assert.equal(viaCtl.code, 1);
    assert.match(viaCtl.stdout, /Failed \(HTTP 412\): failover is not possible/);
    const usage = await ctlProcess(['failover', '--force']);
    assert.equal(usage.code, 2, 'a missing --candidate is a usage error');
  });

  it('edit-config: invalid values are refused, max_connections leads to a pending restart, restart_pending clears it', bounded, async () => {
    const bad = await ctl(['edit-config', '--set', 'ttl=abc', '--force']);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /"ttl" must be an integer from 5 to 3600/);
    const ok = await ctl(['edit-config', '--set', 'db.parameters.max_connections=41', '--force']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /\+ +max_connections: 41/);
    const shown = await ctl(['show-config', '-o', 'json']);
    assert.equal((JSON.parse(shown.stdout) as { db: { parameters: { max_connections: number } } }).db.parameters.max_connections, 41);
    // Every member rewrites its configuration and reloads; PostgreSQL then reports the pending restart.
    for (const member of cluster.members) {
      await cluster.waitFor(
        `pending restart on ${member.name}`,
        async () => (await member.query<{ p: boolean }>("SELECT pending_restart AS p FROM pg_settings WHERE name = 'max_connections'"))[0]?.p === true,
        30_000,
      );
    }
    // The loop publishes it: pending_restart and its reason on every member's node document.
    for (const member of cluster.members) {
      const doc = await cluster.waitFor(
        `pending_restart in ${member.name}'s /ha`,
        async () => {
          const d = (await member.get('/ha')).json();
          return d.pending_restart === true ? d : undefined;
        },
        30_000,
      );
      assert.deepEqual(doc.pending_restart_reason, { max_connections: { old_value: '40', new_value: '41' } });
    }
    const listed = JSON.parse((await ctl(['list', '-o', 'json'])).stdout) as { members: Array<{ pending_restart?: boolean }> };
    assert.equal(listed.members.filter((m) => m.pending_restart).length, 3, 'ctl list shows the pending restart on every member');
    const restarted = await ctl(['restart', '--pending', '--force']);
    assert.equal(restarted.code, 0, restarted.stdout + restarted.stderr);
    assert.equal((restarted.stdout.match(/restarted successfully/g) ?? []).length, 3, restarted.stdout);
    for (const member of cluster.members) {
      await cluster.waitFor(
        `max_connections 41 on ${member.name}`,
        async () => (await member.query<{ v: string }>("SELECT current_setting('max_connections') AS v").catch(() => []))[0]?.v === '41',
        30_000,
      );
    }
    const again = await post(cluster.members[0]!, '/restart', { restart_pending: true });
    assert.deepEqual(again, { status: 503, text: 'restart conditions are not satisfied' });
    for (const member of cluster.members) {
      await cluster.waitFor(`pending_restart cleared on ${member.name}`, async () => (await member.get('/ha')).json().pending_restart === undefined, 30_000);
    }
    await settled();
  });

  it('edit-config through $EDITOR shows the diff and applies it', bounded, async () => {
    const saved = process.env.VISUAL;
    process.env.VISUAL = "sed -i -e 's/^ttl: 8$/ttl: 9/'";
    try {
      const r = await ctl(['edit-config', '--force']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^-ttl: 8$/m);
      assert.match(r.stdout, /^\+ttl: 9$/m);
    } finally {
      if (saved === undefined) delete process.env.VISUAL;
      else process.env.VISUAL = saved;
    }
    assert.equal((JSON.parse((await cluster.members[0]!.get('/config')).body) as { ttl: number }).ttl, 9);
  });

  it('a scheduled restart runs at its time; a cancelled one does not', bounded, async () => {
    const primary = await settled();
    const replica = cluster.members.find((m) => m !== primary)!;
    const startTime = async (): Promise<string> => (await replica.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t'))[0]!.t;
    const before = await startTime();
    const cancelled = await post(replica, '/restart', { schedule: new Date(Date.now() + 60_000).toISOString() });
    assert.deepEqual(cancelled, { status: 202, text: 'Restart scheduled' });
    const del = await fetch(`${replica.apiUrl}/restart`, { method: 'DELETE', headers: { Authorization: basic } });
    assert.equal(del.status, 200);
    const r = await post(replica, '/restart', { schedule: new Date(Date.now() + 1500).toISOString(), role: 'replica' });
    assert.deepEqual(r, { status: 202, text: 'Restart scheduled' });
    assert.equal((await replica.get('/restart')).status, 200);
    await cluster.waitFor('the scheduled restart', async () => (await startTime().catch(() => before)) !== before, 20_000);
    assert.equal((await replica.get('/restart')).status, 404);
    await settled();
  });

  it('switchover to a named candidate answers when the new primary leads; history records it', bounded, async () => {
    const primary = await settled();
    const candidate = cluster.members.find((m) => m !== primary && m !== cluster.members[2])!;
    const r = await ctl(['switchover', '--candidate', candidate.name, '--force']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), `Successfully switched over to "${candidate.name}"`);
    assert.equal(await cluster.leaderName(), candidate.name);
    await cluster.waitFor('the candidate answers /primary', async () => (await candidate.status('/primary')) === 200, 15_000);
    // The new leader writes the timeline history after its promotion checkpoint, a moment after the reply.
    await cluster.waitFor(
      'the switchover in ctl history',
      async () => {
        const history = await ctl(['history', '-o', 'json']);
        return history.code === 0 && (JSON.parse(history.stdout) as unknown[]).length >= 1;
      },
      15_000,
    );
    await settled();
  });

  it('switchover without a candidate moves the primary to an eligible replica (never the nofailover one)', bounded, async () => {
    const primary = await settled();
    const r = await post(primary, '/switchover', { leader: primary.name });
    assert.equal(r.status, 200, r.text);
    const match = /^Successfully switched over to "(.+)"$/.exec(r.text);
    assert.ok(match, `unexpected reply: ${r.text}`);
    assert.notEqual(match[1], primary.name);
    assert.notEqual(match[1], cluster.members[2]!.name);
    assert.equal(await cluster.leaderName(), match[1]);
    await settled();
  });

  it('a scheduled switchover waits for its time, then runs; /cluster shows it meanwhile', bounded, async () => {
    const primary = await settled();
    const candidate = cluster.members.find((m) => m !== primary && m !== cluster.members[2])!;
    const at = new Date(Date.now() + 4000).toISOString();
    const r = await ctl(['switchover', '--candidate', candidate.name, '--scheduled', at, '--force']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.trim(), 'Switchover scheduled');
    const doc = (await primary.get('/cluster')).json() as { scheduled_switchover?: { from: string; to: string } };
    assert.deepEqual({ from: doc.scheduled_switchover?.from, to: doc.scheduled_switchover?.to }, { from: primary.name, to: candidate.name });
    assert.match((await ctl(['list'])).stdout, /Switchover scheduled at:/);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(await cluster.leaderName(), primary.name, 'nothing happens before the scheduled time');
    await cluster.waitFor('the scheduled switchover', async () => (await cluster.leaderName()) === candidate.name, 30_000);
    assert.ok(Date.now() >= Date.parse(at) - 100, 'not before its time');
    await settled();
  });

  it('synchronous mode: /sync and /async codes, a switchover only to the synchronous standby', bounded, async () => {
    const primary = await settled();
    assert.equal((await ctl(['edit-config', '--set', 'synchronous_mode=true', '--force'])).code, 0);
    const syncName = await cluster.waitFor(
      'a synchronous standby',
      async () => {
        const doc = (await primary.get('/cluster')).json() as { members: Array<{ name: string; role: string }> };
        return doc.members.find((m) => m.role === 'sync_standby')?.name;
      },
      30_000,
    );
    const sync = cluster.members.find((m) => m.name === syncName)!;
    const other = cluster.members.find((m) => m !== primary && m !== sync)!;
    await cluster.waitFor('/sync on the synchronous standby', async () => (await sync.status('/sync')) === 200, 15_000);
    assert.equal(await other.status('/sync'), 503);
    assert.equal(await other.status('/async'), 200);
    assert.equal(await sync.status('/async'), 503);
    const refused = await post(primary, '/switchover', { leader: primary.name, candidate: other.name });
    assert.deepEqual(refused, { status: 412, text: 'candidate name does not match with sync_standby' });
    if (sync !== cluster.members[2]) {
      const r = await post(primary, '/switchover', { leader: primary.name, candidate: sync.name });
      assert.deepEqual(r, { status: 200, text: `Successfully switched over to "${sync.name}"` });
    }
    assert.equal((await ctl(['edit-config', '--set', 'synchronous_mode=null', '--force'])).code, 0);
    await settled();
  });

  it(
    'quorum commit: ANY n in pg_settings, voters and quorum in the sync key, health codes in each mode, a switchover proven by the votes',
    bounded,
    async () => {
      let primary = await settled();
      const codes = async (member: Member): Promise<string> => {
        const paths = ['/sync', '/async', '/quorum', '/read-only-quorum'];
        return (await Promise.all(paths.map((p) => member.status(p)))).map((code, i) => `${paths[i]}=${code}`).join(' ');
      };
      const syncKey = async (): Promise<Record<string, string>> =>
        (await cluster.leases()).find((l) => l.metadata?.name === 'ctl-sync')?.metadata?.annotations ?? {};
      const standbyNames = async (member: Member): Promise<string> =>
        (await member.query<{ v: string }>("SELECT setting AS v FROM pg_settings WHERE name = 'synchronous_standby_names'"))[0]!.v;
      // Asynchronous: no quorum standbys; the primary still answers /read-only-quorum.
      for (const replica of cluster.members.filter((m) => m !== primary)) {
        assert.equal(await codes(replica), '/sync=503 /async=200 /quorum=503 /read-only-quorum=503', replica.name);
      }
      assert.equal(await codes(primary), '/sync=503 /async=503 /quorum=503 /read-only-quorum=200');

      assert.equal((await ctl(['edit-config', '--set', 'synchronous_mode=quorum', '--force'])).code, 0);
      const voters = cluster.members
        .filter((m) => m !== primary)
        .map((m) => m.name)
        .sort();
      const any1 = `ANY 1 (${voters.map((v) => `"${v}"`).join(',')})`;
      await cluster.waitFor(`${any1} on the primary`, async () => (await standbyNames(primary)) === any1, 30_000);
      await cluster.waitFor(
        'voters and quorum 1 in the sync key',
        async () => {
          const key = await syncKey();
          return key.leader === primary.name && key.sync_standby === voters.join(',') && key.quorum === '1';
        },
        30_000,
      );
      for (const replica of cluster.members.filter((m) => m !== primary)) {
        await cluster.waitFor(
          `quorum codes on ${replica.name}`,
          async () => (await codes(replica)) === '/sync=503 /async=503 /quorum=200 /read-only-quorum=200',
          15_000,
        );
        assert.equal((await replica.get('/ha')).json().quorum_standby, true);
      }
      assert.equal(await codes(primary), '/sync=503 /async=503 /quorum=503 /read-only-quorum=200');
      const doc = (await primary.get('/cluster')).json() as { members: Array<{ role: string }> };
      assert.equal(doc.members.filter((m) => m.role === 'quorum_standby').length, 2, JSON.stringify(doc.members));

      // A switchover: the candidate needs the vote of the other voter (quorum 1) and gets it.
      const candidate = cluster.members.find((m) => m !== primary && m !== cluster.members[2])!;
      const moved = await post(primary, '/switchover', { leader: primary.name, candidate: candidate.name });
      assert.deepEqual(moved, { status: 200, text: `Successfully switched over to "${candidate.name}"` });
      primary = await settled();
      assert.equal(primary, candidate);
      const newVoters = cluster.members
        .filter((m) => m !== primary)
        .map((m) => m.name)
        .sort();
      await cluster.waitFor(
        "the new leader's voters and quorum",
        async () => {
          const key = await syncKey();
          return key.leader === primary.name && key.sync_standby === newVoters.join(',') && key.quorum === '1';
        },
        30_000,
      );

      // Two acknowledgements wanted: ANY 2 and quorum 0 (each ack set holds every voter).
      assert.equal((await ctl(['edit-config', '--set', 'synchronous_node_count=2', '--force'])).code, 0);
      const any2 = `ANY 2 (${newVoters.map((v) => `"${v}"`).join(',')})`;
      await cluster.waitFor(`${any2} and quorum 0`, async () => (await standbyNames(primary)) === any2 && (await syncKey()).quorum === '0', 30_000);

      assert.equal((await ctl(['edit-config', '--set', 'synchronous_mode=null', '--set', 'synchronous_node_count=null', '--force'])).code, 0);
      await cluster.waitFor('asynchronous again', async () => (await standbyNames(primary)) === '' && (await syncKey()).sync_standby === undefined, 30_000);
      await settled();
    },
  );

  it('pause and resume show in the configuration and the member list', bounded, async () => {
    const paused = await ctl(['pause']);
    assert.equal(paused.code, 0, paused.stderr);
    assert.match((await ctl(['show-config'])).stdout, /pause: true/);
    for (const member of cluster.members) {
      await cluster.waitFor(`pause in ${member.name}'s /ha`, async () => (await member.get('/ha')).json().pause === true, 15_000);
    }
    assert.equal((await ctl(['pause'])).code, 1, 'pausing twice fails');
    const primary = (await cluster.primary())!;
    const noCandidate = await post(primary, '/switchover', { leader: (await cluster.leaderName())! });
    assert.deepEqual(noCandidate, { status: 400, text: 'Switchover is possible only to a specific candidate in a paused state' });
    assert.equal((await ctl(['resume'])).code, 0);
    assert.doesNotMatch((await ctl(['show-config'])).stdout, /pause/);
  });

  it('reinit of a replica re-clones it; reinit of the leader is refused', bounded, async () => {
    const primary = await settled();
    const leaderReinit = await ctl(['reinit', primary.name, '--force']);
    assert.equal(leaderReinit.code, 1);
    assert.match(leaderReinit.stdout, /I am the leader, can not reinitialize/);
    const replica = cluster.members.find((m) => m !== primary)!;
    const requested = new Date();
    const clonesBefore = (replica.log().match(/created a replica from/g) ?? []).length;
    const r = await ctl(['reinit', replica.name, '--force']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /reinitialize started/);
    // A fresh clone: a new postmaster in recovery, started after the request, and the clone logged.
    await cluster.waitFor(
      'the re-cloned replica',
      async () => {
        const rows = await replica.query<{ fresh: boolean; standby: boolean }>(
          'SELECT pg_postmaster_start_time() > $1 AS fresh, pg_is_in_recovery() AS standby',
          [requested],
        );
        return rows[0]?.fresh === true && rows[0].standby === true;
      },
      60_000,
    );
    // The log line may reach the file a moment after the new postmaster answers.
    await cluster.waitFor('the clone logged', async () => (replica.log().match(/created a replica from/g) ?? []).length >= clonesBefore + 1, 10_000);
    assert.equal((replica.log().match(/created a replica from/g) ?? []).length, clonesBefore + 1, 'cloned exactly once more after reinit');
  });
  it('paused: a dead leader is not replaced automatically, a manual failover to a replica is (leaderless)', bounded, async () => {
    const primary = await settled();
    const candidate = cluster.members.find((m) => m !== primary && m !== cluster.members[2])!;
    assert.equal((await ctl(['pause'])).code, 0);
    await cluster.waitFor('pause on the candidate', async () => (await candidate.get('/ha')).json().pause === true, 15_000);
    primary.killPod();
    await cluster.waitFor('the lease to lapse', async () => (await candidate.get('/ha')).json().cluster_unlocked === true, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal(await candidate.isWritable(), false, 'no automatic failover while paused');
    const r = await post(candidate, '/failover', { candidate: candidate.name });
    assert.deepEqual(r, { status: 200, text: `Successfully failed over to "${candidate.name}"` });
    await cluster.waitFor('the candidate writable', () => candidate.isWritable(), 30_000);
    assert.equal((await ctl(['resume'])).code, 0);
  });
});
