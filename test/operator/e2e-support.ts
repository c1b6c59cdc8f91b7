import assert from 'node:assert/strict';
import { RbacAuthorizationV1Api, type AppsV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { group, plural, version } from '../../api/crd/types.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { isPodReady } from '../../operator/reconcile/status.js';
import { podSelector, selectorString } from '../../api/naming.js';
import { operatorRules } from '../../operator/rbac.js';
import { eventually } from './support.js';
import { acceptsConnection } from '../support/ports.js';
import { clusterCa, serverNameOf, serviceName, superuserClient, verifyFull } from './cluster-tls.js';

/** What the end-to-end files read from a DatabaseCluster's status. */
export interface ClusterStatus {
  phase?: string;
  currentPrimary?: string;
  readyInstances?: number;
  members?: Array<{
    name: string;
    role: string;
    ready: boolean;
    state?: string;
    volumes?: Array<{ volume: string; capacityBytes: number; usedBytes: number; freeBytes: number; full?: boolean }>;
  }>;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  diskUsage?: string;
  switchover?: { targetInstance: string; result: string };
  pooler?: {
    instances: number;
    readyInstances: number;
    paused?: number;
    reachingPostgres?: number;
    readOnly?: { instances: number; readyInstances: number; onReplicas?: number };
  };
}

/** How a test reaches a Service: its cluster IP (stand-in proxy) or a ready pod it selects. */
export type ServiceResolver = (api: OperatorKubeApi, namespace: string, service: string) => Promise<string | undefined>;

/** The Service's cluster IP, served by the local node's proxy. */
export const viaClusterIp: ServiceResolver = async (api, namespace, name) => {
  const service = await api.core.readNamespacedService({ namespace, name });
  return service.spec?.clusterIP && service.spec.clusterIP !== 'None' ? service.spec.clusterIP : undefined;
};

/**
 * A ready pod the Service selects, as kube-proxy would pick from its Endpoints: used where the
 * Endpoints cannot hold the pods' loopback addresses (a real API server refuses them).
 */
export const viaSelector: ServiceResolver = async (api, namespace, name) => {
  const service = await api.core.readNamespacedService({ namespace, name });
  const selector = service.spec?.selector;
  if (!selector) return undefined;
  const pods = await api.listPods(namespace, selectorString(selector));
  return pods.find((pod: V1Pod) => isPodReady(pod) && pod.status?.podIP)?.status?.podIP;
};

/** Helpers bound to one cluster: create it, read status, wait for health, run SQL through a Service. */
/** Phase, members and the reasons of the unhealthy conditions, in one line. */
function describeStatus(s: ClusterStatus): string {
  const members = (s.members ?? []).map((m) => `${m.name}:${m.role}${m.ready ? '' : '(not ready)'}${m.state ? `/${m.state}` : ''}`).join(' ');
  const reasons = (s.conditions ?? [])
    .filter((c) => (c.type === 'Ready' ? c.status !== 'True' : c.status === 'True' && c.type === 'Degraded'))
    .map((c) => `${c.type}=${c.reason}: ${c.message}`);
  return `phase ${s.phase ?? '-'}, ready ${s.readyInstances ?? 0}, primary ${s.currentPrimary ?? '-'}, members [${members}]${reasons.length ? `, ${reasons.join('; ')}` : ''}`;
}

export function clusterDriver(api: OperatorKubeApi, namespace: string, name: string, resolve: ServiceResolver) {
  let password = '';
  let ca: string | undefined;
  const status = async () => ((await api.readCluster(namespace, name))?.status ?? {}) as ClusterStatus;

  /** SQL as the superuser over verified TLS (every remote session needs TLS); `serverName` when the caller knows it. */
  const sql = async (host: string, text: string, params: unknown[] = [], serverName?: string) => {
    ca ??= await clusterCa(api, namespace, name);
    // A server stopping under a rollout ends idle connections ("terminating connection due to
    // administrator command"): that reaches the query as a rejection; superuserClient's listener
    // keeps it from surfacing as an uncaught 'error' event after the test that made the client ended.
    const client = superuserClient(host, password, verifyFull(ca, serverName ?? (await serverNameOf(api, namespace, name, host))), {
      connectMs: 3_000,
      queryMs: 10_000,
    });
    await client.connect().catch((error: unknown) => {
      ca = undefined; // read again next time: the CA may have been rotated
      throw error;
    });
    try {
      return (await client.query(text, params)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  return {
    status,
    sql,
    /** Phase, members and unhealthy conditions in one line, for a failure's message. */
    async describe(): Promise<string> {
      return describeStatus(await status());
    },
    async create(spec: Record<string, unknown>): Promise<void> {
      await api.custom.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name }, spec },
      });
    },
    async readPassword(): Promise<void> {
      const secret = await api.core.readNamespacedSecret({ namespace, name: `${name}-superuser` });
      password = Buffer.from(secret.data!.password!, 'base64').toString('utf8');
    },
    async query(service: string, text: string, params: unknown[] = []) {
      const host = await eventually(`${service} address`, () => resolve(api, namespace, service), 30_000).catch(async (error: Error) => {
        // Which pods the Service could have had, and why none qualified.
        const pods = (await api.listPods(namespace, selectorString(podSelector(name))).catch(() => []))
          .map(
            (p) =>
              `${p.metadata?.name}(role ${p.metadata?.labels?.['keelson.io/role'] ?? '-'}, ${isPodReady(p) ? 'ready' : 'not ready'}, ip ${p.status?.podIP ?? '-'})`,
          )
          .join(' ');
        throw new Error(`${error.message}; pods ${pods}; ${describeStatus(await status())}`, { cause: error });
      });
      return sql(host, text, params, serviceName(namespace, service));
    },
    /** The database pods (not the pooler's). */
    async pods(): Promise<V1Pod[]> {
      return api.listPods(namespace, selectorString(podSelector(name)));
    },
    healthyWith(instances: number, timeoutMs = 90_000) {
      return eventually(
        `${name} Healthy with ${instances} instances`,
        async () => {
          const s = await status();
          const roles = s.members?.map((m) => m.role) ?? [];
          const primaries = roles.filter((r) => r === 'primary').length;
          if (s.phase === 'Healthy' && s.readyInstances === instances && primaries === 1 && roles.filter((r) => r === 'replica').length === instances - 1) {
            // Healthy means the pod labelled primary is Ready (ADR 0510); the Endpoints and the proxy
            // follow that pod change on their own clock, so the client's view is checked too.
            const host = await resolve(api, namespace, `${name}-rw`);
            if (host && (await acceptsConnection(host, Ports.postgres))) return s;
            throw new Error(`Healthy, but ${name}-rw (${host ?? 'no address'}) does not accept connections yet`);
          }
          // Thrown, not returned: a timeout then says where the cluster stood.
          throw new Error(`last status: ${describeStatus(s)}`);
        },
        timeoutMs,
      );
    },
    async events(): Promise<Array<{ reason?: string; message?: string }>> {
      return (await api.core.listNamespacedEvent({ namespace })).items.filter((e) => e.involvedObject.name === name);
    },
    async leases(): Promise<string[]> {
      return (await api.listLeases(namespace)).map((l) => l.metadata!.name!).filter((n) => n.startsWith(`${name}-`));
    },
  };
}

/**
 * Deletes the primary's pod, waits for another primary in status, then writes `id` through
 * `<name>-rw` (retrying while the Service follows). Returns the old and new primary and how long
 * the new one took to appear.
 */
export async function failOver(api: OperatorKubeApi, namespace: string, driver: ClusterDriver, table: string, id: number) {
  const old = (await driver.status()).currentPrimary!;
  const started = Date.now();
  await api.core.deleteNamespacedPod({ namespace, name: old });
  const next = await eventually(
    'a new primary',
    async () => {
      const s = await driver.status();
      return s.currentPrimary && s.currentPrimary !== old ? s.currentPrimary : undefined;
    },
    45_000,
  );
  const elapsedMs = Date.now() - started;
  const rw = `${old.replace(/-\d+$/, '')}-rw`;
  await eventually(
    `write through ${rw} after failover`,
    async () => {
      await driver.query(rw, `INSERT INTO ${table} (id, note) VALUES ($1, 'after failover') ON CONFLICT (id) DO NOTHING`, [id]);
      return true;
    },
    30_000,
  );
  return { old, next, elapsedMs };
}

/** Deletes the DatabaseCluster and waits until it and every one of its DCS Leases are gone. */
export async function deleteCluster(api: OperatorKubeApi, namespace: string, name: string, driver: ClusterDriver): Promise<void> {
  if ((await driver.leases()).length === 0) throw new Error('ha-node should keep its DCS in Leases before deletion');
  await api.custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name });
  await eventually('cluster gone', async () => (await api.readCluster(namespace, name)) === undefined, 30_000);
  await eventually(`no ${name} Leases`, async () => (await driver.leases()).length === 0, 30_000);
}

export type ClusterDriver = ReturnType<typeof clusterDriver>;

/** One pod replaced during a rollout, as seen by PodTracker. */
export interface Replacement {
  name: string;
  revision?: string;
  /** Role label when its deletion was first seen. */
  role?: string;
  /** The pod labelled primary at that moment (another one, if the operator switched over first). */
  primaryThen?: string;
}

/**
 * Polls a cluster's pods and records each pod deletion in order, with the pod's role and the
 * cluster's primary at that moment: what a rollout's "replicas first, switchover, then the old
 * primary" is judged by.
 */
export function trackPods(driver: ClusterDriver, intervalMs = 200) {
  const seen = new Map<string, string>(); // name → uid whose deletion is already recorded or pending
  const recorded = new Set<string>();
  const replacements: Replacement[] = [];
  let stopped = false;
  const poll = async () => {
    const pods = await driver.pods().catch(() => undefined);
    if (!pods) return;
    const primary = pods.find((p) => p.metadata?.labels?.['keelson.io/role'] === 'primary' && !p.metadata?.deletionTimestamp)?.metadata?.name;
    const current = new Map(pods.map((p) => [p.metadata!.name!, p]));
    const record = (name: string, uid: string, labels: Record<string, string> | undefined) => {
      if (recorded.has(uid)) return;
      recorded.add(uid);
      replacements.push({ name, revision: labels?.['controller-revision-hash'], role: labels?.['keelson.io/role'], primaryThen: primary });
    };
    for (const [name, pod] of current) {
      const uid = pod.metadata!.uid!;
      const before = seen.get(name);
      if (before && before !== uid) record(name, before, labelsByUid.get(before));
      if (pod.metadata?.deletionTimestamp) record(name, uid, pod.metadata.labels);
      seen.set(name, uid);
      labelsByUid.set(uid, pod.metadata?.labels);
    }
    for (const [name, uid] of seen) if (!current.has(name)) record(name, uid, labelsByUid.get(uid));
  };
  const labelsByUid = new Map<string, Record<string, string> | undefined>();
  const loop = (async () => {
    while (!stopped) {
      await poll();
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    async stop(): Promise<Replacement[]> {
      stopped = true;
      await loop;
      return replacements;
    },
  };
}

/**
 * Inserts a row through a Service every `intervalMs` until stopped and remembers the ids whose
 * COMMIT succeeded: after a rollout or failover every one of them must still be there.
 */
export function keepWriting(driver: ClusterDriver, service: string, table: string, firstId: number, intervalMs = 250) {
  const committed: number[] = [];
  let next = firstId;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const id = next++;
      try {
        await driver.query(service, `INSERT INTO ${table} (id, note) VALUES ($1, 'rolling')`, [id]);
        committed.push(id);
      } catch {
        // The primary may be moving; an insert that failed did not commit.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    async stop(): Promise<number[]> {
      stopped = true;
      await loop;
      return committed;
    },
  };
}

/** Grants the user exactly operator/rbac.ts (what the chart's ClusterRole holds), cluster-wide. */
export async function grantOperatorRules(admin: KubeConfig, user: string): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: user }, rules: operatorRules() } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
}

/**
 * Changes the image (through `patch`) while writing through `<name>-rw`, waits until every pod
 * runs it on the StatefulSet's new update revision with one primary, and checks what every
 * rollout must hold: each pod replaced once and none while it was the primary, the old primary
 * (the one when the first pod went) last, writes went on, none committed was lost. Returns the
 * replacements for checks of the caller's own.
 */
export async function rollOutImage(
  apps: AppsV1Api,
  namespace: string,
  driver: ClusterDriver,
  options: { name: string; image: string; instances: number; table: string; patch: () => Promise<void>; timeoutMs: number },
) {
  const before = (await apps.readNamespacedStatefulSet({ namespace, name: options.name })).status?.updateRevision;
  // Right after another case the status may be between two passes without a primary named: wait for one.
  const primaryAtPatch = await eventually('a primary named in status', async () => (await driver.status()).currentPrimary, 30_000);
  const tracker = trackPods(driver);
  const writer = keepWriting(driver, `${options.name}-rw`, options.table, 1000);
  await options.patch();
  const revision = await eventually(
    'a new update revision',
    async () => {
      const rev = (await apps.readNamespacedStatefulSet({ namespace, name: options.name })).status?.updateRevision;
      return rev && rev !== before ? rev : undefined;
    },
    30_000,
  );
  await eventually(
    'every pod on the new revision and image, one primary',
    async () => {
      const pods = await driver.pods();
      const s = await driver.status();
      const updated = pods.every(
        (p) =>
          p.metadata?.labels?.['controller-revision-hash'] === revision && p.spec?.containers[0]?.image === options.image && !p.metadata?.deletionTimestamp,
      );
      if (pods.length === options.instances && updated && s.phase === 'Healthy' && s.members?.filter((m) => m.role === 'primary').length === 1) return true;
      // Thrown, not returned: a timeout then says where the rollout stood.
      const podsText = pods
        .map(
          (p) =>
            `${p.metadata?.name}:${p.metadata?.labels?.['controller-revision-hash']}:${p.spec?.containers[0]?.image}${p.metadata?.deletionTimestamp ? ':deleting' : ''}`,
        )
        .join(' ');
      const events = (await driver.events())
        .slice(-4)
        .map((e) => `${e.reason}: ${e.message}`)
        .join(' | ');
      throw new Error(`revision ${revision}; pods ${podsText}; ${describeStatus(s)}; events ${events}`);
    },
    options.timeoutMs,
  );
  const committed = await writer.stop();
  const replaced = await tracker.stop();
  assert.deepEqual(
    replaced.map((r) => r.name).sort(),
    Array.from({ length: options.instances }, (_, i) => `${options.name}-${i}`),
    'each pod replaced once',
  );
  const last = replaced.at(-1)!;
  // A failure names the order, the roles then, and what the operator said it did.
  const story = async () =>
    `replaced ${replaced.map((r) => `${r.name} (${r.role ?? 'no role'}, primary then ${r.primaryThen ?? 'none'})`).join(', ')}; events ${(await driver.events())
      .filter((e) => /RollingUpdate|Switchover/.test(e.reason ?? ''))
      .slice(-6)
      .map((e) => `${e.reason}: ${e.message}`)
      .join(' | ')}`;
  for (const r of replaced) if (r.role !== 'replica') assert.fail(`${r.name} went while it was ${r.role ?? 'without a role'}: ${await story()}`);
  // The roll starts from the primary of that moment: a failover between the patch and the first
  // replacement (a loaded machine's API server too slow for a lease renewal) moves it.
  const oldPrimary = replaced[0]?.primaryThen ?? primaryAtPatch;
  if (oldPrimary !== primaryAtPatch) process.stderr.write(`# the primary moved from ${primaryAtPatch} to ${oldPrimary} before the first replacement\n`);
  if (last.name !== oldPrimary) assert.fail(`the old primary ${oldPrimary} last: ${await story()}`);
  assert.ok(committed.length > 0, 'writes went on during the rollout');
  const present = new Set(
    await eventually(
      `${options.name}-rw answers`,
      async () => (await driver.query(`${options.name}-rw`, `SELECT id FROM ${options.table} ORDER BY id`)).map((r) => r.id as number),
      30_000,
    ),
  );
  assert.deepEqual(
    committed.filter((id) => !present.has(id)),
    [],
    'every committed write survived the rollout',
  );
  return { oldPrimary, replaced };
}
