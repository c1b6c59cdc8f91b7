import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { CoreV1Api } from '@kubernetes/client-node';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../lib/http.js';
import { createLogger } from '../../lib/log.js';
import type { LeaseDcs } from '../../sidecar/ha-node/dcs/lease-dcs.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { dcsFor, memberRecord, serveOpsApp, snapshotFor } from '../sidecar/ha-node/ops/support.js';
import { runCtl } from './ctl-runner.js';

/**
 * `keelson ctl` with a Kubernetes lookup and no credential flags: the REST API credentials come
 * from the cluster's `<name>-api` Secret, read only when a mutating request needs them. The
 * stand-in's request log (debug) counts the reads, so a read-only command provably makes none.
 */
describe('keelson ctl reads the cluster Secret only for mutating requests', () => {
  const requests: string[] = [];
  let api: TestApiServer;
  let dcs: LeaseDcs;
  let server: RunningServer;
  let target: string[];
  const secretReads = () => requests.filter((r) => r.includes('/secrets/creds-api')).length;

  before(async () => {
    for (const name of ['KEELSON_API_USERNAME', 'KEELSON_API_PASSWORD', 'KEELSON_API_TOKEN']) delete process.env[name];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as { msg?: string; method?: string; url?: string };
          if (entry.msg === 'request') requests.push(`${entry.method} ${entry.url}`);
        }
        done();
      },
    });
    api = await startTestApiServer({ logger: createLogger({ name: 'ctl-api', level: 'debug', destination }) });
    dcs = dcsFor(api, 'creds', 'a');
    await dcs.start();
    await dcs.getCluster();
    await dcs.attemptToAcquireLeader(1);
    await dcs.setConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 });
    ({ server } = await serveOpsApp(dcs, snapshotFor('a', 'creds', dcs), { credentials: { username: 'keelson', password: 'from-secret' } }));
    await dcs.touchMember(memberRecord('a', `${server.url.replace(/\/$/, '')}/ha`, { role: 'primary' }));
    await api.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'creds-api' }, type: 'kubernetes.io/basic-auth', stringData: { username: 'keelson', password: 'from-secret' } },
    });
    target = ['--cluster', 'creds', '--namespace', 'default', '--kubeconfig', api.kubeconfigPath];
  });

  after(async () => {
    await server?.close();
    dcs?.stop();
    await api?.close();
  });

  it('list, topology, show-config and history find the member through its Lease and never read the Secret', async () => {
    for (const command of ['list', 'topology', 'show-config', 'history']) {
      const before = requests.length;
      const result = await runCtl([...target, command]);
      assert.equal(result.code, 0, `${command}: ${result.stderr}`);
      assert.ok(
        requests.slice(before).some((r) => r.includes('/leases')),
        `${command} looked the members up in the API server`,
      );
    }
    assert.match((await runCtl([...target, 'list'])).stdout, /\ba\b.*[Ll]eader/);
    assert.equal(secretReads(), 0, `requests: ${requests.join(', ')}`);
  });

  it('a mutating command reads the Secret once and authenticates with it', async () => {
    const paused = await runCtl([...target, 'pause']);
    assert.equal(paused.code, 0, `${paused.stdout}${paused.stderr}`);
    assert.match(paused.stdout, /paused/);
    assert.equal(secretReads(), 1);
    const resumed = await runCtl([...target, 'resume']);
    assert.equal(resumed.code, 0, `${resumed.stdout}${resumed.stderr}`);
    assert.equal(secretReads(), 2, 'one read per run');
  });

  it('takes the cluster as a positional argument, as patronictl does, and refuses one that disagrees with --cluster', async () => {
    const lookup = ['--namespace', 'default', '--kubeconfig', api.kubeconfigPath];
    for (const command of ['list', 'topology', 'show-config', 'history']) {
      const result = await runCtl([...lookup, command, 'creds']);
      assert.equal(result.code, 0, `${command} creds: ${result.stderr}`);
    }
    assert.match((await runCtl([...lookup, 'list', 'creds'])).stdout, /\ba\b.*[Ll]eader/);
    assert.equal((await runCtl([...lookup, '--cluster', 'creds', 'list', 'creds'])).code, 0, 'both given and agreeing');
    const mismatch = await runCtl([...lookup, '--cluster', 'creds', 'list', 'other']);
    assert.equal(mismatch.code, 2);
    assert.match(mismatch.stderr, /the cluster named as an argument \("other"\) differs from --cluster "creds"/);
    // A switchover names its cluster the same way; with no replica to hand over to, the refusal comes from the member.
    const switchover = await runCtl([...lookup, 'switchover', 'creds', '--force']);
    assert.doesNotMatch(switchover.stderr, /too many arguments|unknown/, switchover.stderr);
    assert.notEqual(switchover.code, 2, `${switchover.stdout}${switchover.stderr}`);
    assert.equal((await runCtl([...lookup, '--cluster', 'other', 'switchover', 'creds', '--force'])).code, 2);
  });
});
