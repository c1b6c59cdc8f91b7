import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { defaultLeaderTimings, LeaderElector } from '../../operator/leader-election.js';
import { kubeRequest, startTestApiServer, type TestApiServer } from '../support/kube.js';
import { eventually } from './support.js';

const logger = createLogger({ name: 'leader-test', level: process.env.LOG_LEVEL ?? 'silent' });
const fast = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };

describe('leader election on a Lease', () => {
  let server: TestApiServer;
  let api: CoordinationV1Api;
  const electors: LeaderElector[] = [];

  function elector(identity: string, name = 'op', log: string[] = []): LeaderElector {
    const e = new LeaderElector({
      api,
      namespace: 'default',
      name,
      identity,
      logger,
      ...fast,
      onStartedLeading: () => log.push(`${identity}:start`),
      onStoppedLeading: () => log.push(`${identity}:stop`),
    });
    electors.push(e);
    return e;
  }

  before(async () => {
    server = await startTestApiServer();
    api = server.kubeConfig.makeApiClient(CoordinationV1Api);
  });
  after(async () => {
    for (const e of electors) await e.stop();
    await server?.close();
  });

  it('uses client-go timings by default', () => {
    assert.deepEqual(defaultLeaderTimings, { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  });

  it('lets exactly one candidate lead and hands over on release', async () => {
    const log: string[] = [];
    const a = elector('a', 'handover', log);
    a.start();
    await eventually('a leads', async () => a.isLeader);
    const b = elector('b', 'handover', log);
    b.start();
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(b.isLeader, false, 'b must not lead while a renews');
    const raw = await kubeRequest(server, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/handover');
    const spec = (raw.body as { spec: { holderIdentity: string; renewTime: string; leaseDurationSeconds: number } }).spec;
    assert.equal(spec.holderIdentity, 'a');
    assert.match(spec.renewTime, /\.\d{6}Z$/, 'MicroTime with 6 fraction digits');
    await a.stop();
    const afterRelease = await api.readNamespacedLease({ namespace: 'default', name: 'handover' });
    assert.ok(['', undefined, 'b'].includes(afterRelease.spec?.holderIdentity), 'a released the lease (holder cleared) on stop');
    await eventually('b leads', async () => b.isLeader, 5_000);
    const lease = await api.readNamespacedLease({ namespace: 'default', name: 'handover' });
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.deepEqual(log, ['a:start', 'a:stop', 'b:start']);
  });

  it('takes over only after the lease expires when the holder vanishes', async () => {
    const a = elector('crashing', 'expiry');
    a.start();
    await eventually('crashing leads', async () => a.isLeader);
    // A crash: the holder stops renewing and never releases.
    await a.stop({ release: false });
    const vanished = Date.now();
    const b = elector('successor', 'expiry');
    b.start();
    await eventually('successor leads', async () => b.isLeader, 8_000);
    const waited = Date.now() - vanished;
    assert.ok(waited >= fast.leaseDurationMs - 300, `took over after ${waited} ms, before the lease expired`);
  });

  it('steps down when it cannot renew within the deadline', async () => {
    const log: string[] = [];
    const a = elector('isolated', 'deadline', log);
    a.start();
    await eventually('isolated leads', async () => a.isLeader);
    server.faults.pause('unavailable');
    try {
      await eventually('isolated steps down', async () => !a.isLeader, 5_000);
    } finally {
      server.faults.resume();
    }
    assert.deepEqual(log, ['isolated:start', 'isolated:stop']);
  });
});
