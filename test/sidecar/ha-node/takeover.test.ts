import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { apiEndpoint, kubeletSignal, leaderCrashed, type CrashEvidence, type Signal } from '../../../sidecar/ha-node/takeover/evidence.js';
import { LeaderCrashJudge } from '../../../sidecar/ha-node/takeover/judge.js';
import { probePort } from '../../../sidecar/ha-node/takeover/probe.js';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { LeaseDcs } from '../../../sidecar/ha-node/dcs/lease-dcs.js';
import { ClusterPods } from '../../../sidecar/ha-node/takeover/leader-pods.js';
import { freePort } from '../../support/ports.js';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';
import { PodStatusReporter } from './kubelet.js';

/** The early-takeover rules (ADR 0404), the probes on real sockets, the CAS and the pod cache on the API stand-in. */

function pod(containerStatus: object | undefined, phase = 'Running'): V1Pod {
  return {
    metadata: { name: 'demo-0' },
    status: {
      phase,
      containerStatuses: containerStatus ? [{ name: 'postgres', image: 'x', imageID: '', ready: false, restartCount: 0, ...containerStatus }] : [],
    },
  };
}

describe('early takeover rules', () => {
  it('needs all three sources to say dead', () => {
    const signals: Signal[] = ['dead', 'alive', 'unknown'];
    let crashed = 0;
    for (const kubelet of signals) {
      for (const postgres of signals) {
        for (const api of signals) {
          const evidence: CrashEvidence = { kubelet, postgres, api };
          if (leaderCrashed(evidence)) crashed += 1;
          assert.equal(leaderCrashed(evidence), kubelet === 'dead' && postgres === 'dead' && api === 'dead', JSON.stringify(evidence));
        }
      }
    }
    assert.equal(crashed, 1);
  });

  it('reads the kubelet signal from the ha-node container only', () => {
    assert.equal(kubeletSignal(undefined, 'postgres'), 'unknown', 'a missing (maybe force-deleted) pod proves nothing');
    assert.equal(kubeletSignal({ metadata: { name: 'x' } }, 'postgres'), 'unknown', 'no status yet');
    assert.equal(kubeletSignal(pod(undefined), 'postgres'), 'unknown');
    assert.equal(kubeletSignal(pod({ state: { running: { startedAt: new Date() } } }), 'postgres'), 'alive');
    assert.equal(kubeletSignal(pod({ state: { running: {} }, ready: false }), 'postgres'), 'alive', 'not ready is not dead');
    assert.equal(kubeletSignal(pod({ state: { terminated: { exitCode: 137 } } }), 'postgres'), 'dead');
    assert.equal(kubeletSignal(pod({ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } }), 'postgres'), 'dead');
    assert.equal(kubeletSignal(pod({ state: { waiting: { reason: 'ContainerCreating' } } }), 'postgres'), 'unknown', 'never started');
    assert.equal(kubeletSignal(pod({ state: { terminated: { exitCode: 137 } } }), 'exporter'), 'unknown', 'another container');
    assert.equal(kubeletSignal(pod(undefined, 'Failed'), 'postgres'), 'dead');
  });

  it('parses the API endpoint of a member', () => {
    assert.deepEqual(apiEndpoint('http://10.0.0.7:8008/ha'), { host: '10.0.0.7', port: 8008 });
    assert.deepEqual(apiEndpoint('http://[fd00::7]:8008/ha'), { host: 'fd00::7', port: 8008 });
    assert.deepEqual(apiEndpoint('https://db-0.example/ha'), { host: 'db-0.example', port: 443 });
    assert.equal(apiEndpoint('not a url'), undefined);
  });
});

describe('crash probes on real sockets', () => {
  let listening: Server;
  let openPort: number;
  let closedPort: number;

  before(async () => {
    openPort = await freePort('127.0.0.1');
    closedPort = await freePort('127.0.0.1');
    listening = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => listening.listen(openPort, '127.0.0.1', resolve));
  });

  after(() => {
    listening?.close();
  });

  it('tells a refused port (dead) from a listening one (alive) and any other failure (unknown)', async () => {
    assert.equal(await probePort('127.0.0.1', openPort, 1000), 'alive');
    assert.equal(await probePort('127.0.0.1', closedPort, 1000), 'dead');
    // A name that never resolves fails without a refusal.
    assert.equal(await probePort('leader.invalid', 5432, 1000), 'unknown');
  });

  it('probes only when the kubelet says dead, and then both ports', async () => {
    const member: MemberRecord = {
      name: 'demo-0',
      conn_url: '',
      api_url: `http://127.0.0.1:${closedPort}/ha`,
      host: '127.0.0.1',
      port: openPort,
      role: 'primary',
      state: 'running',
      tags: {},
      version: '0',
      heartbeat: 0,
    };
    const pods = new Map<string, V1Pod>([['demo-0', pod({ state: { running: {} } })]]);
    const judge = new LeaderCrashJudge({ pod: (name) => pods.get(name) }, 'postgres', 1000);
    assert.equal(judge.kubeletSaysDead(member), false);
    assert.deepEqual(await judge.evidence(member), { kubelet: 'alive', postgres: 'unknown', api: 'unknown' });
    pods.set('demo-0', pod({ state: { terminated: { exitCode: 137 } } }));
    assert.equal(judge.kubeletSaysDead(member), true);
    const twoOfThree = await judge.evidence(member);
    assert.deepEqual(twoOfThree, { kubelet: 'dead', postgres: 'alive', api: 'dead' });
    assert.equal(leaderCrashed(twoOfThree), false, 'PostgreSQL still listening: no takeover');
    const allDead = await judge.evidence({ ...member, port: closedPort });
    assert.equal(leaderCrashed(allDead), true);
    const noAddress = await judge.evidence({ ...member, host: '', port: closedPort });
    assert.equal(noAddress.postgres, 'unknown', 'a record without an address proves nothing');
  });
});

describe('takeover writes and pod status on the API server stand-in', () => {
  const quiet = createLogger({ name: 'takeover-test', level: 'silent' });
  let api: TestApiServer;
  const dcsFor = (name: string): LeaseDcs =>
    new LeaseDcs({ kubeConfig: api.kubeConfig, namespace: 'default', scope: 'tk', name, ttl: () => 30, requestTimeoutMs: () => 3000, logger: quiet });

  before(async () => {
    api = await startTestApiServer();
  });

  after(async () => {
    await api?.close();
  });

  it('takes over only at the exact lease version judged; the old holder then cannot renew', async () => {
    const old = dcsFor('tk-0');
    const replica = dcsFor('tk-1');
    assert.equal(await old.attemptToAcquireLeader(100), true);
    const judged = (await replica.getCluster()).leader!;
    assert.equal(judged.holder, 'tk-0');
    assert.equal(await replica.attemptToAcquireLeader(90), false, 'a live lease is not acquired the ordinary way');
    // The holder writes after the judgement (a renewal in flight at the kill): the takeover must fail.
    assert.equal(await old.updateLeader(110), true);
    await replica.getCluster();
    assert.equal(await replica.takeOverLeader(judged, 90), false, 'stale judgement');
    const rejudged = (await replica.getCluster()).leader!;
    assert.equal(await replica.takeOverLeader(rejudged, 90), true);
    const cluster = await replica.getCluster();
    assert.equal(cluster.leader?.holder, 'tk-1');
    assert.equal(cluster.leader?.transitions, 1);
    assert.equal(replica.isLeader(), true);
    assert.equal(await old.updateLeader(120), false, 'the old holder lost the lock');
    assert.equal(old.isLeader(), false);
  });

  it('without access to pods it warns once and has no status (no early takeover)', async () => {
    const closed = await freePort('127.0.0.1');
    const unreachable = new k8s.KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${closed}` }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
    const pods = new ClusterPods(unreachable, 'default', 'tk', createLogger({ name: 'pods', level: 'info', destination }));
    pods.start();
    try {
      const deadline = Date.now() + 5000;
      while (!lines.some((l) => l.includes('cannot watch the cluster pods'))) {
        if (Date.now() > deadline) throw new Error('no warning logged');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(pods.pod('tk-0'), undefined);
      assert.equal(kubeletSignal(pods.pod('tk-0'), 'postgres'), 'unknown');
    } finally {
      pods.stop();
    }
    assert.equal(lines.filter((l) => l.includes('cannot watch the cluster pods')).length, 1);
  });

  it('caches pod status and reports changes', async () => {
    const core = api.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'tk-0', labels: { 'keelson.io/cluster': 'tk' } }, spec: { containers: [{ name: 'postgres', image: 'x' }] } },
    });
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'other-0', labels: { 'keelson.io/cluster': 'other' } }, spec: { containers: [{ name: 'postgres', image: 'x' }] } },
    });
    const pods = new ClusterPods(api.kubeConfig, 'default', 'tk', quiet);
    const changed: string[] = [];
    pods.onChange((name) => changed.push(name));
    pods.start();
    try {
      const deadline = Date.now() + 10_000;
      const until = async (what: string, check: () => boolean): Promise<void> => {
        while (!check()) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await until('the pod in the cache', () => pods.pod('tk-0') !== undefined);
      assert.equal(pods.pod('other-0'), undefined, 'only this cluster');
      const kubelet = new PodStatusReporter(api.kubeConfig, 'default', 0);
      await kubelet.running('tk-0');
      await until('running reported', () => kubeletSignal(pods.pod('tk-0'), 'postgres') === 'alive');
      await kubelet.terminated('tk-0', 137);
      await until('terminated reported', () => kubeletSignal(pods.pod('tk-0'), 'postgres') === 'dead');
      assert.ok(changed.filter((n) => n === 'tk-0').length >= 2, `changes: ${changed.join(', ')}`);
    } finally {
      pods.stop();
    }
  });
});
