/**
 * One fault round on a cluster's primary or its synchronous standby, shared by the partition suite
 * and bench/partition-soak: wait for a synchronous standby, start a writer through `<name>-rw` and
 * a watch of where the service proxy routes `-rw`, cut the victim's network, hold past ttl, heal,
 * wait for Healthy, then read back every acknowledged commit. Returns what happened; the caller
 * judges it (the suite asserts, the soak prints).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { clusterCa, podName } from './cluster-tls.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../lib/kube/client.js';
import type { Logger } from '../../lib/log.js';
import { startLocalStack, type LocalStack } from '../../local/cluster/stack.js';
import { heal } from '../../local/node/netns/partition.js';
import { Ports } from '../../lib/ports.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { names } from '../../api/naming.js';
import { clusterDriver, keepWriting, viaClusterIp, type ClusterDriver, type ClusterStatus } from './e2e-support.js';
import { committedSince, splitBrainInstants, startSampler, type SplitBrain } from './partition-support.js';
import { eventually } from './support.js';
import { staleSince, summarize, watchRouting, type RoutingSummary } from './rw-watch.js';

/**
 * The local stack in namespace mode (the caller must run inside an isolated namespace) with a
 * 3-member synchronous cluster `demo` that is Healthy, the writer's and sampler's tables, and a
 * sampler running on every member.
 */
export async function startPartitionCluster(options: { podNetwork: string; ttlSeconds: number; logger: Logger }) {
  const namespace = 'default';
  const dir = mkdtempSync(join(tmpdir(), 'keelson-partition-'));
  chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({
      dir,
      logger: options.logger,
      operatorVersion: '0.1.0',
      ipPrefix: '127.0.43',
      network: 'namespace',
      podNetwork: options.podNetwork,
    });
    const api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
    const driver = clusterDriver(api, namespace, 'demo', viaClusterIp);
    await driver.create({ instances: 3, ha: { ttl: options.ttlSeconds, loopWait: 2, retryTimeout: 4, synchronousMode: 'on' } });
    await driver.healthyWith(3, 120_000);
    await driver.readPassword();
    await driver.query('demo-rw', 'CREATE TABLE IF NOT EXISTS acks (id int PRIMARY KEY, note text)');
    await driver.query('demo-rw', 'CREATE TABLE IF NOT EXISTS samples (member text, at timestamptz DEFAULT now())');
    const pods = await driver.pods();
    const members = pods.map((p) => ({ name: p.metadata!.name!, ip: p.status!.podIP! }));
    const secret = await api.core.readNamespacedSecret({ namespace, name: 'demo-superuser' });
    const password = Buffer.from(secret.data!.password!, 'base64').toString('utf8');
    const ca = await clusterCa(api, namespace, 'demo');
    const sampler = startSampler({ members, password, table: 'samples', tls: { ca, serverName: (member) => podName(namespace, 'demo', member) } });
    const running = stack;
    const setup = { stack: running, api, driver, sampler, namespace, cluster: 'demo', ttlSeconds: options.ttlSeconds, password, pods };
    return {
      ...setup,
      members,
      async close(): Promise<void> {
        await sampler.stop();
        await running.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface RoundSetup {
  stack: LocalStack;
  api: OperatorKubeApi;
  driver: ClusterDriver;
  sampler: ReturnType<typeof startSampler>;
  /** The superuser's password and the cluster's pods (their addresses stay): for the -rw watch. */
  password: string;
  pods: V1Pod[];
  namespace: string;
  cluster: string;
  ttlSeconds: number;
  /** First writer id of this round (ids must not repeat across rounds). */
  firstId: number;
  /** How long Healthy may take after the heal before the round throws. */
  healthyTimeoutMs: number;
  /** Throw unless another member takes writes during the cut (default: when the primary is cut). */
  expectFailover?: boolean;
  /** Whose network is cut (default the primary). */
  victim?: 'primary' | 'sync standby';
}

export interface RoundOutcome {
  old: string;
  /** The member whose network was cut. */
  victim: string;
  successor: string;
  standbys: string[];
  /** From the cut to the successor's first committed sample; undefined when the old primary kept it. */
  failoverMs?: number;
  /** When the old primary kept the lock: from the cut to its first commit of a sample begun after the cut took hold (1 s). */
  primaryResumedMs?: number;
  /** From the heal to the operator's Healthy status with three ready members. */
  healthyAfterHealMs: number;
  status: ClusterStatus;
  acknowledged: number;
  missing: number[];
  splitBrains: SplitBrain[];
  /** Where the proxy routed -rw, judged from the election of a new primary (when there was one). */
  routing: RoutingSummary;
  /** Time from the cut on during which -rw listed a server that did not take writes. */
  staleAfterCutMs: number;
}

/** The pod's network namespace, from the node agent that runs it. */
export function namespaceOf(stack: LocalStack, namespace: string, pod: string): string {
  const worker = [...stack.node.agent.workers.values()].find((w) => w.key === `${namespace}/${pod}` && !w.isTerminated);
  const path = worker?.networkNamespace;
  if (!path) throw new Error(`no network namespace for pod ${namespace}/${pod}`);
  return path;
}

/** What the service proxy routes `<cluster>-rw`'s PostgreSQL port to, as pod addresses. */
async function proxiedRw(setup: RoundSetup): Promise<() => string[]> {
  const service = await setup.api.core.readNamespacedService({ namespace: setup.namespace, name: names(setup.cluster).rwService });
  const key = `${service.spec?.clusterIP}:${Ports.postgres}`;
  return () => (setup.stack.node.proxy.snapshot()[key] ?? []).map((backend) => backend.split(':')[0]!);
}

/** Cuts the victim's network, given its pod's network namespace and its name. */
export type FaultCut = (namespacePath: string, victim: string) => Promise<unknown>;

export async function faultRound(setup: RoundSetup, cut: FaultCut): Promise<RoundOutcome> {
  const { driver, sampler, namespace, cluster } = setup;
  const old = (await driver.status()).currentPrimary!;
  // Synchronous mode promotes only a member the sync key names: wait until the primary published one.
  const standbys = await eventually(
    'a synchronous standby in the sync key',
    async () => {
      const sync = (await setup.api.listLeases(namespace)).find((l) => l.metadata?.name === `${cluster}-sync`)?.metadata?.annotations;
      return sync?.leader === old && sync.sync_standby ? sync.sync_standby.split(',') : undefined;
    },
    30_000,
  );
  const victim = setup.victim === 'sync standby' ? standbys[0]! : old;
  const path = namespaceOf(setup.stack, namespace, victim);
  const writer = keepWriting(driver, `${cluster}-rw`, 'acks', setup.firstId);
  const routing = watchRouting(setup.api, driver, namespace, cluster, setup.password, setup.pods, await proxiedRw(setup));
  let acknowledged: number[] = [];
  let healed = false;
  try {
    await eventually(`${old} takes samples before the fault`, async () => committedSince(sampler.samples, Date.now() - 1000).includes(old), 15_000);
    const cutAt = Date.now();
    await cut(path, victim);
    if (setup.expectFailover ?? victim === old)
      await eventually('another member takes writes', async () => committedSince(sampler.samples, cutAt, old)[0], 60_000);
    // Held past ttl: whatever the old primary does on its own has had time to happen.
    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + 2 * setup.ttlSeconds * 1000 - Date.now())));
    const successor = committedSince(sampler.samples, cutAt, old)[0] ?? old;
    const firstCommit = Math.min(...sampler.samples.filter((s) => s.ok && s.member === successor && s.startedAt >= cutAt).map((s) => s.endedAt));
    const resumed = sampler.samples.filter((s) => s.ok && s.member === old && s.startedAt >= cutAt + 1000).map((s) => s.endedAt - cutAt);
    await heal(path);
    healed = true;
    const healedAt = Date.now();
    const status = await driver.healthyWith(3, setup.healthyTimeoutMs);
    const healthyAfterHealMs = Date.now() - healedAt;
    const samples = await routing.stop();
    const ipOf = (pod: string) => setup.pods.find((p) => p.metadata?.name === pod)?.status?.podIP;
    acknowledged = await writer.stop();
    const present = await eventually(
      'acknowledged rows readable',
      async () => driver.query(`${cluster}-rw`, 'SELECT id FROM acks WHERE id = ANY($1)', [acknowledged]),
      30_000,
    );
    const missing = acknowledged.filter((id) => !present.some((row) => row.id === id));
    return {
      old,
      victim,
      successor,
      standbys,
      failoverMs: successor === old ? undefined : firstCommit - cutAt,
      primaryResumedMs: successor === old && resumed.length > 0 ? Math.min(...resumed) : undefined,
      healthyAfterHealMs,
      status,
      acknowledged: acknowledged.length,
      missing,
      splitBrains: splitBrainInstants(sampler.samples),
      routing: summarize(samples, old, ipOf),
      staleAfterCutMs: staleSince(samples, cutAt),
    };
  } finally {
    if (!healed) await heal(path);
    await routing.stop();
    await writer.stop();
  }
}
