import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestCluster } from '../sidecar/ha-node/harness.js';
import { repoRoot, superPassword } from '../sidecar/ha-node/harness.js';
import { startOpsCluster } from '../sidecar/ha-node/ops/ops-cluster.js';
import { runCtl, runPlugin, type CtlResult } from './ctl-runner.js';
import { runKeelson } from '../support/run-process.js';

const user = 'ops-admin';
const password = 'ops-password';
const bounded = { timeout: 150_000 };

interface ClusterDoc {
  members: Array<{ name: string; role: string; state: string; host: string; port: number }>;
  scheduled_switchover?: { at: string };
}

/**
 * What patronictl users reach for beyond list/switchover (dsn, query, flush, list --extended and
 * --watch, remove) and the `kubectl keelson` plugin, against a live 2-member cluster (real
 * PostgreSQL 15 and ha-node processes, Lease DCS and pods on the API server stand-in).
 */
describe('keelson ctl parity with patronictl, and kubectl keelson', () => {
  let cluster: TestCluster;
  let urls: string[] = [];
  const ctl = (args: string[], answers: string[] = []): Promise<CtlResult> => runCtl([...urls.flatMap((u) => ['--url', u]), ...args], answers);
  const viaLeases = (): string[] => ['--cluster', cluster.scope, '--namespace', 'default', '--kubeconfig', cluster.api.kubeconfigPath];
  const doc = async (): Promise<ClusterDoc> => JSON.parse((await ctl(['list', '-o', 'json'])).stdout) as ClusterDoc;
  const leaderName = async (): Promise<string> => (await doc()).members.find((m) => m.role === 'leader')!.name;
  const later = (minutes: number): string => new Date(Date.now() + minutes * 60_000).toISOString();

  async function settled(timeoutMs = 60_000): Promise<void> {
    await cluster.waitFor(
      'a leader and a streaming replica',
      async () => {
        const members = (await doc()).members;
        return members.some((m) => m.role === 'leader') && members.some((m) => m.role !== 'leader' && m.state === 'streaming');
      },
      timeoutMs,
    );
  }

  before(async () => {
    process.env.KEELSON_API_USERNAME = user;
    process.env.KEELSON_API_PASSWORD = password;
    process.env.PGPASSWORD = superPassword;
    cluster = await startOpsCluster({ scope: 'parity', members: 2, env: { KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password } });
    urls = cluster.members.map((m) => m.apiUrl);
    await settled(150_000);
  });

  after(async () => {
    delete process.env.PGPASSWORD;
    await cluster?.stop();
  });

  it("dsn prints the leader's (or a named member's) PostgreSQL address", bounded, async () => {
    const name = await leaderName();
    const member = cluster.members.find((m) => m.name === name)!;
    const replica = cluster.members.find((m) => m.name !== name)!;
    assert.deepEqual(await ctl(['dsn']), { code: 0, stdout: `host=${member.ip} port=${member.pgPort}\n`, stderr: '' });
    assert.equal((await ctl(['dsn', '--role', 'replica'])).stdout, `host=${replica.ip} port=${replica.pgPort}\n`);
    assert.deepEqual(JSON.parse((await ctl(['dsn', replica.name, '-o', 'json'])).stdout), { member: replica.name, host: replica.ip, port: replica.pgPort });
    const unknown = await ctl(['dsn', 'nobody']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /nobody is not a member of the cluster/);
  });

  it('query runs SQL on the leader, a replica or a named member, and reports SQL errors', bounded, async () => {
    const table = await ctl(['query', '--command', "SELECT 1 AS one, 'x' AS two"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /\| one \| two \|\n\+-+\+-+\+\n\| 1 +\| x +\|/);
    const onReplica = await ctl(['query', '--role', 'replica', '--command', 'SELECT pg_is_in_recovery() AS r', '-o', 'json']);
    assert.deepEqual(JSON.parse(onReplica.stdout), [{ r: true }]);
    const onLeader = await ctl(['query', '-m', await leaderName(), '--command', 'SELECT pg_is_in_recovery() AS r', '-o', 'json']);
    assert.deepEqual(JSON.parse(onLeader.stdout), [{ r: false }]);
    const two = await ctl(['query', '--command', 'CREATE TEMP TABLE t (i int); SELECT 2 AS i']);
    assert.match(two.stdout, /^CREATE\n/);
    assert.match(two.stdout, /\| i \|\n.*\n\| 2 \|/);
    const bad = await ctl(['query', '--command', 'SELECT nonsense FROM nowhere']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /relation "nowhere" does not exist/);
    const none = await ctl(['query']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /give the SQL with --command or --file/);
  });

  it('flush cancels a scheduled restart and a scheduled switchover; list --extended shows the restart', bounded, async () => {
    assert.equal((await ctl(['flush', 'restart', '--force'])).stdout, 'No scheduled restart\n');
    assert.equal((await ctl(['flush', 'switchover', '--force'])).stdout, 'No scheduled switchover\n');
    const name = await leaderName();
    const at = later(60);
    const scheduled = await ctl(['restart', name, '--scheduled', at, '--force']);
    assert.equal(scheduled.code, 0, scheduled.stdout + scheduled.stderr);
    const extended = await ctl(['list', '--extended']);
    assert.match(extended.stdout, /Replay LSN \| Replay lag in MB \| Scheduled restart/);
    const row = extended.stdout.split('\n').find((l) => l.startsWith(`| ${name} `))!;
    assert.match(row, /\| 20\d\d-\d\d-\d\dT[^|]+\|( [^|]*\|)?$/, `the leader's row shows its scheduled restart: ${row}`);
    const flushed = await ctl(['flush', 'restart', '--force']);
    assert.equal(flushed.code, 0, flushed.stdout + flushed.stderr);
    assert.equal(await cluster.members.find((m) => m.name === name)!.status('/restart'), 404, 'no restart is scheduled any more');
    assert.doesNotMatch((await ctl(['list', '-e'])).stdout, /20\d\d-\d\d-\d\dT/);

    const replica = (await doc()).members.find((m) => m.role !== 'leader')!.name;
    const switchover = await ctl(['switchover', '--candidate', replica, '--scheduled', later(60), '--force']);
    assert.equal(switchover.code, 0, switchover.stdout + switchover.stderr);
    assert.ok((await doc()).scheduled_switchover, 'the switchover is scheduled');
    const refused = await ctl(['flush', 'switchover']);
    assert.equal(refused.code, 2, 'asks for confirmation, and nobody can answer in a test');
    assert.ok((await doc()).scheduled_switchover, 'a refused flush changes nothing');
    const cancelled = await ctl(['flush', 'switchover', '--force']);
    assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
    assert.equal((await doc()).scheduled_switchover, undefined);
    assert.equal(await leaderName(), name, 'the leader stayed');
    assert.equal((await ctl(['flush', 'everything', '--force'])).code, 2);
  });

  it('list --watch repeats every interval, --count times', bounded, async () => {
    const watched = await ctl(['list', '--watch', '0.2', '--count', '3']);
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal((watched.stdout.match(/^\d{4}-\d\d-\d\dT.*Z\n\+ Cluster: parity$/gm) ?? []).length, 3, watched.stdout);
    assert.equal((await ctl(['list', '--watch', '0'])).code, 2, 'a zero interval is a usage error');
  });

  it('kubectl keelson status shows pods with roles and the members; promote and restart act through the API', bounded, async () => {
    const status = await runPlugin([...viaLeases().slice(2), 'status', cluster.scope]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /DatabaseCluster parity not found/);
    const leader = await leaderName();
    const replica = cluster.members.find((m) => m.name !== leader)!.name;
    assert.match(status.stdout, new RegExp(`\\| ${leader} +\\| primary +\\|`), status.stdout);
    assert.match(status.stdout, /Members \(ha-node\)\n\+ Cluster: parity/);
    const promoted = await runPlugin([...viaLeases().slice(2), 'promote', cluster.scope, replica]);
    assert.equal(promoted.code, 0, promoted.stdout + promoted.stderr);
    await cluster.waitFor(`${replica} leads`, async () => (await leaderName()) === replica, 60_000);
    await settled();
    const restarted = await runPlugin([...viaLeases().slice(2), 'restart', cluster.scope, leader]);
    assert.equal(restarted.code, 0, restarted.stdout + restarted.stderr);
    assert.match(restarted.stdout, /restarted successfully/i);
    await settled();
  });

  it('remove wipes the DCS state only after the typed confirmations, and refuses otherwise', bounded, async () => {
    assert.equal((await ctl(['remove'])).code, 2, 'needs the cluster name, not --url');
    const saved = urls;
    urls = [];
    try {
      const before = (await cluster.leases()).length;
      const wrongName = await ctl([...viaLeases(), 'remove'], ['other']);
      assert.equal(wrongName.code, 1);
      assert.match(wrongName.stderr, /Cluster names specified do not match/);
      const noAnswer = await ctl([...viaLeases(), 'remove'], [cluster.scope]);
      assert.equal(noAnswer.code, 2, noAnswer.stderr);
      const wrongLeader = await ctl([...viaLeases(), 'remove'], [cluster.scope, 'Yes I am aware', 'nobody']);
      assert.equal(wrongLeader.code, 1);
      assert.match(wrongLeader.stdout, /This cluster currently is healthy/);
      assert.equal((await cluster.leases()).length, before, 'refusals delete nothing');
      // The real binary reads typed answers from stdin, piped ones too.
      const piped = await binary(['ctl', ...viaLeases(), 'remove'], 'parity\nno\n');
      assert.equal(piped.code, 1, piped.stderr);
      assert.match(piped.stderr, /You did not exactly type "Yes I am aware"/);
      assert.equal((await cluster.leases()).length, before);

      await Promise.all(cluster.members.map((m) => m.stop()));
      const leader = (await cluster.leases()).find((l) => l.metadata?.name === 'parity-leader')?.spec?.holderIdentity;
      const answers = [cluster.scope, 'Yes I am aware', ...(leader ? [leader] : [])];
      const removed = await ctl([...viaLeases(), 'remove'], answers);
      assert.equal(removed.code, 0, removed.stdout + removed.stderr);
      assert.match(removed.stdout, /Removed the DCS state of cluster parity: \d+ Leases/);
      assert.deepEqual(
        (await cluster.leases()).map((l) => l.metadata?.name),
        [],
      );
      const again = await ctl([...viaLeases(), 'remove'], answers);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /has no DCS state/);
    } finally {
      urls = saved;
    }
  });
});

async function binary(args: string[], stdin: string): Promise<CtlResult> {
  const { code, stdout, stderr } = await runKeelson(args, { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: 'warn' }, stdin });
  return { code: code ?? -1, stdout, stderr };
}
