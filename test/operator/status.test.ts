import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, describeRefusal, isRefusal, refusedStatus } from '../../operator/reconcile/refusals.js';
import { computeStatus } from '../../operator/reconcile/status.js';
import { statusDiffers } from '../../operator/reconcile/status-diff.js';
import { sampleCluster } from './fixtures.js';
import { pod } from './pods.js';

const now = new Date('2026-11-22T20:00:00Z');

describe('status', () => {
  it('reports Healthy with the primary, members and scale selector when all instances are ready', () => {
    const cluster = sampleCluster();
    const status = computeStatus({
      cluster,
      now,
      statefulSetReplicas: 3,
      outdatedPods: 0,
      pods: [pod('demo-1', { role: 'replica' }), pod('demo-0', { role: 'primary' }), pod('demo-2', { role: 'replica' })],
      haMembers: [{ name: 'demo-1', role: 'replica', state: 'streaming', timeline: 2, lag: 0 }],
    });
    assert.equal(status.phase, 'Healthy');
    assert.equal(status.currentPrimary, 'demo-0');
    assert.equal(status.readyInstances, 3);
    assert.equal(status.selector, 'keelson.io/cluster=demo,app.kubernetes.io/component=database');
    assert.deepEqual(
      status.members?.map((m) => m.name),
      ['demo-0', 'demo-1', 'demo-2'],
    );
    assert.deepEqual(status.members?.[1], { name: 'demo-1', role: 'replica', ready: true, state: 'streaming', timeline: 2, lagBytes: 0 });
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'True', 'AllInstancesReady'],
        ['Progressing', 'False', 'Stable'],
        ['Degraded', 'False', 'AsExpected'],
      ],
    );
  });

  it('reports Creating before the first Ready, Degraded after, and keeps transition times', () => {
    const creating = computeStatus({ cluster: sampleCluster(), now, statefulSetReplicas: 3, outdatedPods: 0, pods: [pod('demo-0', { ready: false })] });
    assert.equal(creating.phase, 'Creating');
    const healthyCluster = sampleCluster();
    healthyCluster.status = computeStatus({
      cluster: healthyCluster,
      now,
      statefulSetReplicas: 3,
      outdatedPods: 0,
      pods: [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })],
    });
    const later = new Date(now.getTime() + 60_000);
    const degraded = computeStatus({
      cluster: healthyCluster,
      now: later,
      statefulSetReplicas: 3,
      outdatedPods: 0,
      pods: [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica', ready: false }), pod('demo-2', { role: 'replica' })],
    });
    assert.equal(degraded.phase, 'Degraded');
    const ready = degraded.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.lastTransitionTime, '2026-11-22T20:01:00Z');
    const progressing = degraded.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.lastTransitionTime, '2026-11-22T20:00:00Z', 'unchanged condition keeps its time');
  });

  it('is not Ready while the members run but the pods are not yet Ready or labelled (the Services would refuse a client)', () => {
    const cluster = sampleCluster();
    const haMembers = [
      { name: 'demo-0', role: 'leader', state: 'running' },
      { name: 'demo-1', role: 'replica', state: 'streaming' },
      { name: 'demo-2', role: 'replica', state: 'streaming' },
    ];
    const at = (pods: ReturnType<typeof pod>[], when = now) =>
      computeStatus({ cluster, now: when, statefulSetReplicas: 3, outdatedPods: 0, pods, haMembers, primary: 'demo-0' });
    const readyOf = (s: ReturnType<typeof computeStatus>) => s.conditions?.find((c) => c.type === 'Ready');

    // ha-node reports every member running before the readiness probes pass.
    const probing = at([
      pod('demo-0', { role: 'primary', ready: false }),
      pod('demo-1', { role: 'replica', ready: false }),
      pod('demo-2', { role: 'replica' }),
    ]);
    assert.equal(probing.phase, 'Creating');
    assert.equal(probing.readyInstances, 1);
    assert.deepEqual([readyOf(probing)?.status, readyOf(probing)?.reason], ['False', 'PodsNotReady']);
    assert.match(readyOf(probing)!.message, /demo-0, demo-1 running but the pod is not Ready yet, so demo-ro\/demo-rw does not route/);

    // Every pod Ready, but the Lease holder still wears the replica label it started with: -rw has no endpoint.
    const labelling = at([pod('demo-0', { role: 'replica' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })]);
    assert.equal(labelling.phase, 'Creating');
    assert.equal(labelling.currentPrimary, 'demo-0');
    assert.equal(labelling.readyInstances, 2);
    assert.deepEqual(
      labelling.members?.map((m) => [m.name, m.role, m.ready]),
      [
        ['demo-0', 'primary', false],
        ['demo-1', 'replica', true],
        ['demo-2', 'replica', true],
      ],
    );
    assert.deepEqual([readyOf(labelling)?.status, readyOf(labelling)?.reason], ['False', 'RoleLabelPending']);

    const served = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })];
    const healthy = at(served);
    assert.equal(healthy.phase, 'Healthy');
    assert.equal(healthy.readyInstances, 3);
    assert.deepEqual([readyOf(healthy)?.status, readyOf(healthy)?.reason], ['True', 'AllInstancesReady']);

    // Once Healthy, the same pods give the same status (no flapping, no write) ...
    cluster.status = JSON.parse(JSON.stringify(healthy)) as typeof healthy;
    assert.equal(statusDiffers(JSON.parse(JSON.stringify(healthy)), at(served, new Date(now.getTime() + 60_000))), false);
    // ... and a demoted member still labelled primary (two pods labelled primary: -rw routes to both) is no longer ready.
    const demoted = at(
      [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'primary' }), pod('demo-2', { role: 'replica' })],
      new Date(now.getTime() + 60_000),
    );
    assert.equal(demoted.phase, 'Degraded');
    assert.deepEqual(
      demoted.members?.map((m) => [m.name, m.role, m.ready]),
      [
        ['demo-0', 'primary', true],
        ['demo-1', 'replica', false],
        ['demo-2', 'replica', true],
      ],
    );
    assert.deepEqual([readyOf(demoted)?.reason, demoted.conditions?.find((c) => c.type === 'Degraded')?.reason], ['RoleLabelPending', 'RoleLabelPending']);
  });

  it("a replacement pod does not inherit the replaced pod's role, state or readiness", () => {
    const cluster = sampleCluster();
    // The Lease and ha-node's records still describe the demo-0 that was deleted (at 127.0.0.5).
    const haMembers = [
      { name: 'demo-0', role: 'leader', state: 'running', host: '127.0.0.5', timeline: 3 },
      { name: 'demo-1', role: 'replica', state: 'streaming', host: '127.0.0.6', timeline: 3, lag: 0 },
      { name: 'demo-2', role: 'replica', state: 'streaming', host: '127.0.0.7', timeline: 3, lag: 0 },
    ];
    const others = [pod('demo-1', { role: 'replica', ip: '127.0.0.6' }), pod('demo-2', { role: 'replica', ip: '127.0.0.7' })];
    const at = (replacement: ReturnType<typeof pod>) =>
      computeStatus({ cluster, now, statefulSetReplicas: 3, outdatedPods: 0, pods: [replacement, ...others], haMembers, primary: 'demo-0' });

    const pending = at(pod('demo-0', { phase: 'Pending', ready: false }));
    assert.deepEqual(pending.members?.[0], { name: 'demo-0', role: 'unknown', ready: false, state: 'Pending' });
    assert.equal(pending.currentPrimary, undefined, 'a pod that never started is no primary');
    assert.equal(pending.conditions?.find((c) => c.type === 'Ready')?.reason, 'NoPrimary');

    // Started at a new address, before its ha-node wrote a record: the pod's own word only.
    const started = at(pod('demo-0', { ready: false, ip: '127.0.0.8' }));
    assert.deepEqual(started.members?.[0], { name: 'demo-0', role: 'primary', ready: false, state: 'Running' });
    assert.equal(started.conditions?.find((c) => c.type === 'Ready')?.reason, 'InstancesNotReady', 'not "running but the pod is not Ready yet"');

    // Its own record (its address): ha-node's word again.
    const own = at(pod('demo-0', { role: 'primary', ip: '127.0.0.5' }));
    assert.deepEqual(own.members?.[0], { name: 'demo-0', role: 'primary', ready: true, state: 'running', timeline: 3 });
    assert.equal(own.phase, 'Healthy');
  });

  it('a recomputed identical status is not a difference (no write)', () => {
    const cluster = sampleCluster();
    const input = { cluster, now, statefulSetReplicas: 3, outdatedPods: 0, pods: [pod('demo-0', { role: 'primary' })] };
    const first = computeStatus(input);
    cluster.status = JSON.parse(JSON.stringify(first));
    const second = computeStatus({ ...input, now: new Date(now.getTime() + 300_000) });
    assert.equal(statusDiffers(JSON.parse(JSON.stringify(first)), second), false);
    assert.equal(computeStatus({ ...input, statefulSetReplicas: 5 }).phase, 'Creating');
  });

  it('a few bytes of lag on an idle cluster are no difference; a WAL segment or a doubling is', () => {
    const cluster = sampleCluster();
    const pods = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' })];
    const withLag = (lag: number) =>
      computeStatus({
        cluster,
        now,
        statefulSetReplicas: 2,
        outdatedPods: 0,
        pods,
        haMembers: [{ name: 'demo-1', role: 'replica', state: 'streaming', timeline: 1, lag }],
      });
    const written = JSON.parse(JSON.stringify(withLag(0))) as unknown;
    assert.equal(statusDiffers(written, withLag(56)), false, 'a standby snapshot record of the idle primary');
    assert.equal(statusDiffers(written, withLag(16 * 1024 * 1024)), true, 'a whole WAL segment behind');
    const behind = JSON.parse(JSON.stringify(withLag(20 * 1024 * 1024))) as unknown;
    assert.equal(statusDiffers(behind, withLag(30 * 1024 * 1024)), false, 'within the same doubling');
    assert.equal(statusDiffers(behind, withLag(40 * 1024 * 1024)), true, 'the next doubling');
    assert.equal(statusDiffers(behind, withLag(10)), true, 'caught up again');
    assert.equal(withLag(56).members?.[1]?.lagBytes, 56, 'what is written stays exact');
  });

  it('states API fallbacks in the ApiFallback condition without changing the phase', () => {
    const pods = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })];
    const base = { cluster: sampleCluster(), now, statefulSetReplicas: 3, outdatedPods: 0, pods };
    const old = computeStatus({ ...base, apiFallbacks: ['PodDisruptionBudget written as policy/v1beta1: the server does not serve policy/v1'] });
    assert.equal(old.phase, 'Healthy');
    const fallback = old.conditions?.find((c) => c.type === 'ApiFallback');
    assert.deepEqual([fallback?.status, fallback?.reason], ['True', 'ServerLacksApi']);
    assert.match(fallback?.message ?? '', /policy\/v1beta1/);
    const modern = computeStatus({ ...base, apiFallbacks: [] }).conditions?.find((c) => c.type === 'ApiFallback');
    assert.deepEqual([modern?.status, modern?.reason], ['False', 'AllApisServed']);
    for (const c of computeStatus({ ...base, apiFallbacks: [] }).conditions ?? []) assert.ok(c.message.length > 0, `${c.type} has a message`);
  });

  it('a refusal sets Applied=False on the stored status, keeps the rest, and a builder failure counts as one', () => {
    const previous = {
      phase: 'Healthy' as const,
      readyInstances: 3,
      conditions: [{ type: 'Ready', status: 'True' as const, reason: 'AllInstancesReady', message: '3/3', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    };
    const refused = refusedStatus(previous, 'HTTP 422: ConfigMap "demo-config" is invalid', 4, now);
    assert.equal(refused.phase, 'Healthy');
    assert.equal(refused.readyInstances, 3);
    assert.deepEqual(
      refused.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'True', 'AllInstancesReady'],
        ['Applied', 'False', 'Refused'],
      ],
    );
    const later = refusedStatus(refused, 'HTTP 422: another', 5, new Date('2026-11-22T21:00:00Z'));
    assert.equal(later.conditions?.find((c) => c.type === 'Applied')?.lastTransitionTime, '2026-11-22T20:00:00Z', 'still False: the transition time stays');
    assert.equal(refusedStatus(undefined, 'x', 1, now).phase, 'Pending', 'a cluster that never had a status says Pending, not nothing');
    assert.throws(
      () =>
        build(() => {
          throw new Error('no port for x');
        }),
      (err: unknown) => isRefusal(err) && /^build: no port for x$/.test(describeRefusal(err)),
    );
    assert.equal(isRefusal(Object.assign(new Error('conflict'), { code: 409 })), false, 'a conflict is retried, not reported');
    const applied = computeStatus({ cluster: sampleCluster(), now, statefulSetReplicas: 3, outdatedPods: 0, pods: [], applied: true }).conditions?.find(
      (c) => c.type === 'Applied',
    );
    assert.deepEqual([applied?.status, applied?.reason], ['True', 'AllObjectsApplied']);
  });
  it('in synchronous modes is not Healthy until the primary names a synchronous standby', () => {
    const pods = [pod('demo-0', { role: 'primary' }), pod('demo-1', { role: 'replica' }), pod('demo-2', { role: 'replica' })];
    const replicas = [
      { name: 'demo-0', role: 'leader' },
      { name: 'demo-1', role: 'replica' },
      { name: 'demo-2', role: 'replica' },
    ];
    const named = [
      { name: 'demo-0', role: 'leader' },
      { name: 'demo-1', role: 'sync_standby' },
      { name: 'demo-2', role: 'replica' },
    ];
    const base = { now, statefulSetReplicas: 3, outdatedPods: 0, pods };
    const degradedOf = (s: ReturnType<typeof computeStatus>) => s.conditions?.find((c) => c.type === 'Degraded');

    // Bootstrap: every instance ready, no synchronous standby yet: still Creating.
    const fresh = sampleCluster({ ha: { synchronousMode: 'on' } });
    const creating = computeStatus({ ...base, cluster: fresh, haMembers: replicas });
    assert.equal(creating.phase, 'Creating');
    fresh.status = computeStatus({ ...base, cluster: fresh, haMembers: named });
    assert.equal(fresh.status.phase, 'Healthy');

    // After it served: the standby dropped from the sync key makes the cluster Degraded, saying why.
    const lost = computeStatus({ ...base, cluster: fresh, haMembers: replicas });
    assert.equal(lost.phase, 'Degraded');
    assert.deepEqual([degradedOf(lost)?.status, degradedOf(lost)?.reason], ['True', 'NoSyncStandby']);
    assert.match(degradedOf(lost)?.message ?? '', /only the primary may be promoted/);
    const syncOf = (s: ReturnType<typeof computeStatus>) => s.conditions?.find((c) => c.type === 'SynchronousStandby');
    assert.deepEqual(
      [syncOf(fresh.status)?.status, syncOf(fresh.status)?.reason, syncOf(fresh.status)?.message],
      ['True', 'Named', 'synchronous standby: demo-1'],
    );
    assert.deepEqual([syncOf(lost)?.status, syncOf(lost)?.reason], ['False', 'NoSyncStandby']);
    // Members not ready (a replica cut off) leave Degraded to them, and the sync condition still says it.
    const notReady = computeStatus({
      ...base,
      cluster: fresh,
      pods: [pods[0]!, pod('demo-1', { role: 'replica', ready: false }), pods[2]!],
      haMembers: replicas,
    });
    assert.deepEqual([notReady.phase, degradedOf(notReady)?.reason, syncOf(notReady)?.reason], ['Degraded', 'InstancesNotReady', 'NoSyncStandby']);
    // Roles unknown on a later pass: the last known word stands.
    const unknown = computeStatus({ ...base, cluster: { ...fresh, status: lost } });
    assert.deepEqual([unknown.phase, syncOf(unknown)?.reason], ['Degraded', 'NoSyncStandby']);

    const strict = sampleCluster({ ha: { synchronousMode: 'strict' } });
    strict.status = fresh.status;
    const blocked = computeStatus({ ...base, cluster: strict, haMembers: replicas });
    assert.equal(blocked.phase, 'Degraded');
    assert.match(degradedOf(blocked)?.message ?? '', /writes wait/);

    const quorum = sampleCluster({ ha: { synchronousMode: 'quorum' } });
    quorum.status = fresh.status;
    assert.equal(computeStatus({ ...base, cluster: quorum, haMembers: named }).phase, 'Degraded', 'quorum needs a quorum standby');
    assert.equal(computeStatus({ ...base, cluster: quorum, haMembers: [{ name: 'demo-1', role: 'quorum_standby' }] }).phase, 'Healthy');
    // Asynchronous clusters, and roles the operator could not read, are judged by readiness alone.
    assert.equal(computeStatus({ ...base, cluster: sampleCluster(), haMembers: replicas }).phase, 'Healthy');
    const healthyStrict = sampleCluster({ ha: { synchronousMode: 'strict' } });
    healthyStrict.status = fresh.status;
    assert.equal(computeStatus({ ...base, cluster: healthyStrict }).phase, 'Healthy', 'last known: named');
  });
});
