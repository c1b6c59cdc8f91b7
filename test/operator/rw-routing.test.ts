import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import type { LocalStack } from '../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { staleRoutingBudgetMs, summarize, timelineOf, watchRouting } from './rw-watch.js';

/**
 * The primary loses the API server (its pod's token is refused; the node, the operator and the
 * replicas still reach it). It demotes itself before its Lease expires but cannot remove its own
 * role label; the new primary must take the old one out of -rw, and the operator must name the
 * Lease holder, however the labels stand.
 */
const ns = 'default';
const logger = createLogger({ name: 'rw-routing', level: process.env.LOG_LEVEL ?? 'silent' });

describe('-rw routing when the primary is cut from the API server', { timeout: 300_000 }, () => {
  let e2e: E2eStack;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let demo: ClusterDriver;

  before(async () => {
    e2e = await startE2eStack('rw', { logger, ipPrefix: '127.0.48' });
    ({ stack, api } = e2e);
    demo = clusterDriver(api, ns, 'demo', viaClusterIp);
    await demo.create({ instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } });
    await demo.healthyWith(3, 150_000);
    await demo.readPassword();
  });

  after(async () => {
    await e2e?.close();
  });

  it('takes the demoted primary out of -rw once another member leads, and the status names the Lease holder', async () => {
    const old = (await demo.status()).currentPrimary!;
    const pods = await demo.pods();
    const ipOf = (name: string) => pods.find((p) => p.metadata?.name === name)?.status?.podIP;
    const password = await readPassword(api);
    const watch = watchRouting(api, demo, ns, 'demo', password, pods);
    const lift = stack.apiServer.faults.refuse({ pod: `${ns}/${old}`, response: 'hang' });
    let samples;
    try {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && summarize(watch.samples, old, ipOf).electedAt === undefined) await new Promise((r) => setTimeout(r, 200));
      // Keep watching while the old primary stays cut off: its own probes and label cannot help.
      await new Promise((r) => setTimeout(r, 20_000));
    } finally {
      lift();
      samples = await watch.stop();
    }
    const summary = summarize(samples, old, ipOf);
    const timeline = timelineOf(samples);
    if (process.env.RW_TIMELINE) process.stderr.write(`${timeline}\n`);
    process.stderr.write(
      `# old primary ${old}: -rw stale ${summary.staleMs} ms, status wrong ${summary.statusWrongMs} ms, NoPrimary ${summary.noPrimaryMs} ms after the election\n`,
    );
    assert.ok(summary.electedAt !== undefined, `another member led with a writable server:\n${timeline}`);
    assert.ok(summary.staleMs <= staleRoutingBudgetMs, `-rw listed a read-only server for ${summary.staleMs} ms after the election:\n${timeline}`);
    assert.equal(summary.noPrimaryMs, 0, `NoPrimary reported for ${summary.noPrimaryMs} ms after the election`);
    assert.ok(summary.statusWrongMs <= 15_000, `the status named another member than the Lease holder for ${summary.statusWrongMs} ms`);
    const last = samples.at(-1)!;
    assert.equal(last.statusPrimary, last.holder, 'the status ends naming the Lease holder');

    // Healed: the old primary rejoins as a replica and the cluster is Healthy again.
    const healed = await demo.healthyWith(3, 90_000);
    assert.notEqual(healed.currentPrimary, old);
    assert.equal(healed.members?.find((m) => m.name === old)?.role, 'replica');
  });
});

async function readPassword(api: OperatorKubeApi): Promise<string> {
  const secret = await api.core.readNamespacedSecret({ namespace: ns, name: 'demo-superuser' });
  return Buffer.from(secret.data!.password!, 'base64').toString('utf8');
}
