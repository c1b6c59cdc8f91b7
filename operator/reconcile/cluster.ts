import type { KubernetesObject, V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { InvalidSpecError, parseDatabaseCluster } from '../api/validate.js';
import type { DatabaseCluster, DatabaseClusterStatus } from '../api/types.js';
import { desiredObjects } from '../builders/index.js';
import type { BuildContext } from '../builders/context.js';
import { buildCredentialSecret, credentialKinds, generatePassword } from '../builders/secrets.js';
import { buildStatefulSet } from '../builders/statefulset.js';
import type { EventRecorder } from '../events.js';
import type { HaNodeClient, HaClusterMember } from '../hanode-client.js';
import type { OperatorKubeApi, RawCluster } from '../kube-api.js';
import { Finalizer, Labels, names, podSelector, Roles, SecretKeys, selectorString } from '../naming.js';
import { applyObject, type WriteRecorder } from './apply.js';
import { executeStep } from './execute.js';
import { planDeclarativeSwitchover, planRollout, planScale, revisionLabel, type Day2Step } from './day2.js';
import { syncDynamicConfig } from './config-sync.js';
import { computeStatus, invalidSpecStatus, statusDiffers } from './status.js';
import { claimsToGrow, keepImmutableFields } from './storage.js';

export interface ReconcileDeps {
  api: OperatorKubeApi;
  haNode: HaNodeClient;
  events: EventRecorder;
  recordWrite: WriteRecorder;
  logger: Logger;
  operatorVersion: string;
  now?: () => Date;
}

export interface ReconcileResult {
  /** Reconcile again after this delay (something is still converging). */
  requeueAfterMs?: number;
}

const serviceMonitorCrd = 'servicemonitors.monitoring.coreos.com';
const convergingRequeueMs = 5_000;

/** Leases of a cluster: labelled with it, owned by it, or its leader Lease by name. */
export function isClusterLease(lease: KubernetesObject, cluster: { name: string; uid: string }): boolean {
  if (lease.metadata?.labels?.[Labels.cluster] === cluster.name) return true;
  if (lease.metadata?.ownerReferences?.some((ref) => ref.uid === cluster.uid)) return true;
  return lease.metadata?.name === names(cluster.name).leaderLease;
}

/**
 * Deletion: the StatefulSet goes first and the Leases only once no instance pod is left, because
 * a member that is still shutting down would write its Leases again; then the finalizer is released.
 * Returns a delay while pods are still terminating.
 */
async function finalize(deps: ReconcileDeps, raw: RawCluster): Promise<ReconcileResult> {
  const { name, namespace, uid } = raw.metadata as { name: string; namespace: string; uid: string };
  const statefulSet = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: names(name).statefulSet, namespace } };
  if (await deps.api.read(statefulSet)) {
    deps.recordWrite('StatefulSet', 'delete');
    await deps.api.delete(statefulSet);
  }
  const pods = await deps.api.listPods(namespace, selectorString(podSelector(name)));
  if (pods.length > 0) {
    for (const pod of pods.filter((p) => !p.metadata?.deletionTimestamp)) {
      deps.recordWrite('Pod', 'delete');
      await deps.api.delete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata!.name!, namespace } });
    }
    return { requeueAfterMs: 1_000 };
  }
  for (const lease of await deps.api.listLeases(namespace)) {
    if (!isClusterLease(lease, { name, uid })) continue;
    deps.recordWrite('Lease', 'delete');
    await deps.api.deleteLease(namespace, lease.metadata!.name!);
  }
  if (!raw.metadata?.finalizers?.includes(Finalizer)) return {};
  deps.recordWrite('DatabaseCluster', 'update');
  await deps.api.replaceCluster({ ...raw, metadata: { ...raw.metadata, finalizers: raw.metadata.finalizers.filter((f) => f !== Finalizer) } });
  deps.logger.info({ cluster: `${namespace}/${name}` }, 'instances stopped, DCS leases deleted, finalizer released');
  return {};
}

async function ensureSecrets(deps: ReconcileDeps, ctx: BuildContext): Promise<void> {
  await Promise.all(
    credentialKinds.map(async (which) => {
      const secret = buildCredentialSecret(ctx, which, '');
      if (await deps.api.read(secret)) return; // never rotate: an existing Secret is left alone
      deps.recordWrite('Secret', 'create');
      await deps.api.create(buildCredentialSecret(ctx, which, generatePassword()));
      await deps.events.record(ctx.cluster.metadata, 'Normal', 'CreatedSecret', `generated ${which} credentials in ${secret.metadata?.name}`);
    }),
  );
}

/** Grows the data PVCs when spec.storage.size went up (StatefulSet templates cannot change). */
async function growVolumes(deps: ReconcileDeps, cluster: DatabaseCluster): Promise<void> {
  const { name, namespace } = cluster.metadata;
  const claims = (await deps.api.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selectorString(podSelector(name)) })).items;
  for (const claim of claimsToGrow(claims, cluster.spec.storage.size)) {
    deps.recordWrite('PersistentVolumeClaim', 'update');
    claim.spec!.resources = { ...claim.spec!.resources, requests: { ...claim.spec!.resources?.requests, storage: cluster.spec.storage.size } };
    await deps.api.core.replaceNamespacedPersistentVolumeClaim({ namespace, name: claim.metadata!.name!, body: claim });
    await deps.events.record(cluster.metadata, 'Normal', 'VolumeResize', `${claim.metadata!.name} → ${cluster.spec.storage.size}`);
  }
}

/** Hands ha-node's API credentials (from the cluster's api Secret) to the client for these pods. */
async function useApiCredentials(deps: ReconcileDeps, ctx: BuildContext, pods: V1Pod[]): Promise<void> {
  const secret = (await deps.api.read(buildCredentialSecret(ctx, 'api', ''))) as V1Secret | undefined;
  const decode = (value: string | undefined) => (value ? Buffer.from(value, 'base64').toString('utf8') : undefined);
  const username = decode(secret?.data?.[SecretKeys.username]);
  const password = decode(secret?.data?.[SecretKeys.password]);
  const hosts = pods.map((pod) => pod.status?.podIP).filter((ip): ip is string => Boolean(ip));
  deps.haNode.useCredentials(hosts, username && password ? { username, password } : undefined);
}

function primaryOf(pods: V1Pod[]): string | undefined {
  const primaries = pods.filter((pod) => pod.metadata?.labels?.[Labels.role] === Roles.primary && !pod.metadata?.deletionTimestamp);
  return primaries.length === 1 ? primaries[0]!.metadata!.name! : undefined;
}

async function haMembers(deps: ReconcileDeps, pods: V1Pod[], primary: string | undefined): Promise<HaClusterMember[] | undefined> {
  const host = pods.find((pod) => pod.metadata?.name === primary)?.status?.podIP;
  if (!host) return undefined;
  try {
    return await deps.haNode.cluster(host);
  } catch {
    return undefined; // status then falls back to pod labels
  }
}

async function writeStatus(deps: ReconcileDeps, raw: RawCluster, status: DatabaseClusterStatus): Promise<void> {
  if (!statusDiffers(raw.status, status)) return;
  deps.recordWrite('DatabaseCluster', 'status');
  await deps.api.replaceClusterStatus({ ...raw, status: status as Record<string, unknown> });
}

/**
 * One level-triggered pass over a DatabaseCluster: make every owned object match the spec, take
 * at most one day-2 step, and report status. Reads are cheap; writes happen only on differences.
 */
export async function reconcileCluster(deps: ReconcileDeps, raw: RawCluster): Promise<ReconcileResult> {
  const now = deps.now?.() ?? new Date();
  const { name, namespace } = raw.metadata as { name: string; namespace: string };
  const log = deps.logger.child({ cluster: `${namespace}/${name}` });
  if (raw.metadata?.deletionTimestamp) return finalize(deps, raw);

  let cluster: DatabaseCluster;
  try {
    cluster = parseDatabaseCluster(raw);
  } catch (err) {
    if (!(err instanceof InvalidSpecError)) throw err;
    const status = invalidSpecStatus(raw as { metadata: { generation?: number }; status?: DatabaseClusterStatus }, err.message, now);
    if (statusDiffers(raw.status, status)) {
      await deps.events.record(raw.metadata as { name: string; namespace: string; uid: string }, 'Warning', 'InvalidSpec', err.message);
      await writeStatus(deps, raw, status);
    }
    log.warn({ issues: err.issues }, 'invalid spec');
    return {};
  }

  if (!raw.metadata?.finalizers?.includes(Finalizer)) {
    deps.recordWrite('DatabaseCluster', 'update');
    raw = await deps.api.replaceCluster({ ...raw, metadata: { ...raw.metadata, finalizers: [...(raw.metadata?.finalizers ?? []), Finalizer] } });
  }

  const ctx: BuildContext = { cluster, operatorVersion: deps.operatorVersion };
  await ensureSecrets(deps, ctx);
  const serviceMonitorAvailable = cluster.spec.monitoring.serviceMonitor.enabled ? await deps.api.crdExists(serviceMonitorCrd) : false;

  const pods = await deps.api.listPods(namespace, selectorString(podSelector(name)));
  const primary = primaryOf(pods);
  await useApiCredentials(deps, ctx, pods);
  const observedSts = await deps.api.read(buildStatefulSet(ctx));
  const scale = planScale(cluster, pods, primary, observedSts?.spec?.replicas);

  // Owned objects do not depend on each other at the API level, so they are applied concurrently.
  const desired = desiredObjects(ctx, { serviceMonitorAvailable });
  const results = await Promise.all(
    desired.map(async (object) => {
      if (object.kind === 'StatefulSet') {
        (object as V1StatefulSet).spec!.replicas = scale.replicas;
        object = keepImmutableFields(object as V1StatefulSet, observedSts);
      }
      const result = await applyObject(deps.api, object, deps.recordWrite);
      if (result.outcome !== 'unchanged') log.info({ kind: object.kind, name: object.metadata?.name, outcome: result.outcome }, 'applied');
      return { kind: object.kind, outcome: result.outcome, stored: result.object };
    }),
  );
  const applied = results.find((r) => r.kind === 'StatefulSet');
  const statefulSet = applied?.stored as V1StatefulSet | undefined;
  if (applied?.outcome === 'updated' && observedSts?.spec?.replicas !== scale.replicas) {
    await deps.events.record(cluster.metadata, 'Normal', 'Scaling', `instances ${observedSts?.spec?.replicas ?? 0} → ${scale.replicas}`);
  }

  await growVolumes(deps, cluster);

  // Day-2: at most one step per pass, in order of urgency.
  const switchover = planDeclarativeSwitchover(cluster, pods, primary, cluster.status?.switchover, now);
  if (switchover.state && switchover.state.result !== cluster.status?.switchover?.result && switchover.state.result !== 'Pending') {
    const type = switchover.state.result === 'Succeeded' ? 'Normal' : 'Warning';
    await deps.events.record(cluster.metadata, type, `Switchover${switchover.state.result}`, switchover.state.message ?? '');
  }
  const updateRevision = statefulSet?.status?.updateRevision;
  const steps: Day2Step[] = [scale.step, switchover.step, planRollout(cluster, pods, updateRevision, primary)];
  const step = steps.find((s) => s.type === 'switchover' || s.type === 'deletePod') ?? steps.find((s) => s.type === 'wait');
  let stepFailed = false;
  if (step && step.type !== 'wait') {
    stepFailed = !(await executeStep(deps, cluster, pods, step));
  }
  const configPending = await syncDynamicConfig(deps, cluster, pods, primary);

  const outdatedPods = updateRevision ? pods.filter((pod) => pod.metadata?.labels?.[revisionLabel] && pod.metadata.labels[revisionLabel] !== updateRevision).length : 0;
  const status = computeStatus({
    cluster,
    pods,
    statefulSetReplicas: scale.replicas,
    outdatedPods,
    haMembers: await haMembers(deps, pods, primary),
    switchover: switchover.state,
    targetPrimary: step?.type === 'switchover' ? step.candidate : undefined,
    now,
  });
  if (configPending.appliedHash) status.appliedConfigHash = configPending.appliedHash;
  else if (cluster.status?.appliedConfigHash) status.appliedConfigHash = cluster.status.appliedConfigHash;
  await writeStatus(deps, raw, status);

  const converging = status.phase !== 'Healthy' || step !== undefined || configPending.pending || stepFailed;
  return converging ? { requeueAfterMs: convergingRequeueMs } : {};
}
