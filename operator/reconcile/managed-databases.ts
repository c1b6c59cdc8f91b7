import type { KubernetesObject } from '@kubernetes/client-node';
import { databaseFinalizer, databaseKind, type DatabaseObjectStatus } from '../../api/crd/database-kind.js';
import type { ManagedReport } from '../../api/crd/managed-status.js';
import type { RawCluster } from '../kube-api.js';
import type { ReconcileDeps } from './deps.js';

/**
 * The operator's side of the Database kind: a finalizer on each object (so a delete policy runs
 * before the object goes), its status from the leader's report, Events when that changes, and the
 * finalizer released once the leader has dropped or retained the database.
 */

/** Watch filter: a new, changed (generation) or deleted Database wakes its cluster; status writes do not. */
export function databaseChanged(object: KubernetesObject, previous: KubernetesObject | undefined): boolean {
  return !previous || object.metadata?.generation !== previous.metadata?.generation || object.metadata?.deletionTimestamp !== undefined;
}

interface RawDatabase extends RawCluster {
  spec?: { cluster?: string; reclaimPolicy?: string };
  status?: DatabaseObjectStatus;
}

export function databasesOf(objects: RawCluster[], cluster: string): RawDatabase[] {
  return (objects as RawDatabase[]).filter((o) => o.spec?.cluster === cluster);
}

function statusFor(object: RawDatabase, report: ManagedReport | undefined): DatabaseObjectStatus {
  const result = report?.databases.find((d) => d.uid === object.metadata?.uid);
  if (!result || (result.generation !== undefined && result.generation !== object.metadata?.generation))
    return { applied: false, message: 'waiting for the cluster leader to apply it' };
  return {
    applied: result.applied,
    ...(result.message ? { message: result.message } : {}),
    ...(result.generation !== undefined ? { observedGeneration: result.generation } : {}),
  };
}

/** Keeps every Database of the cluster; true while one is not applied yet. */
export async function reconcileDatabases(deps: ReconcileDeps, objects: RawDatabase[], report: ManagedReport | undefined): Promise<boolean> {
  let waiting = false;
  for (let object of objects) {
    const metadata = object.metadata!;
    const target = { name: metadata.name!, namespace: metadata.namespace!, uid: metadata.uid!, kind: databaseKind };
    const finalizers = metadata.finalizers ?? [];
    if (metadata.deletionTimestamp) {
      const released = object.spec?.reclaimPolicy !== 'delete' || report?.databases.some((d) => d.uid === metadata.uid && d.released);
      if (released && finalizers.includes(databaseFinalizer)) {
        deps.recordWrite('Database', 'update');
        await deps.api.replaceDatabase({ ...object, metadata: { ...metadata, finalizers: finalizers.filter((f) => f !== databaseFinalizer) } });
      } else if (!released) waiting = true;
      continue;
    }
    if (!finalizers.includes(databaseFinalizer)) {
      deps.recordWrite('Database', 'update');
      object = (await deps.api.replaceDatabase({ ...object, metadata: { ...metadata, finalizers: [...finalizers, databaseFinalizer] } })) as RawDatabase;
    }
    const status = statusFor(object, report);
    if (!status.applied) waiting = true;
    const before = object.status ?? {};
    if (before.applied === status.applied && before.message === status.message && before.observedGeneration === status.observedGeneration) continue;
    deps.recordWrite('Database', 'status');
    await deps.api.replaceDatabaseStatus({ ...object, status: status as Record<string, unknown> });
    if (status.applied)
      await deps.events.record(target, 'Normal', 'DatabaseApplied', `database "${(object.spec as { name?: string }).name ?? ''}" is as the spec says`);
    else if (status.message && status.observedGeneration !== undefined) await deps.events.record(target, 'Warning', 'DatabaseNotApplied', status.message);
  }
  return waiting;
}

/** A deleted cluster keeps no database: its Databases' finalizers go, whatever their policy. */
export async function releaseDatabases(deps: ReconcileDeps, namespace: string, cluster: string): Promise<void> {
  for (const object of databasesOf(await deps.api.listDatabases(namespace).catch(() => []), cluster)) {
    const finalizers = object.metadata?.finalizers ?? [];
    if (!finalizers.includes(databaseFinalizer)) continue;
    deps.recordWrite('Database', 'update');
    await deps.api.replaceDatabase({ ...object, metadata: { ...object.metadata, finalizers: finalizers.filter((f) => f !== databaseFinalizer) } });
  }
}
