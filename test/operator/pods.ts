import type { V1Pod } from '@kubernetes/client-node';
import { Labels } from '../../api/naming.js';
import { revisionLabel } from '../../operator/reconcile/day2.js';

/** A pod as the stand-in or kubelet would report it. */
export function pod(name: string, options: { role?: 'primary' | 'replica'; ready?: boolean; revision?: string; ip?: string; phase?: string } = {}): V1Pod {
  const labels: Record<string, string> = { [Labels.cluster]: 'demo' };
  if (options.role) labels[Labels.role] = options.role;
  if (options.revision) labels[revisionLabel] = options.revision;
  return {
    metadata: { name, namespace: 'db', labels },
    status: {
      phase: options.phase ?? 'Running',
      // A pod that has not started has no address yet.
      ...(options.phase === 'Pending' ? {} : { podIP: options.ip ?? '127.0.0.9' }),
      conditions: [{ type: 'Ready', status: options.ready === false ? 'False' : 'True' }],
    },
  };
}
