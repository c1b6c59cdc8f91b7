import type { V1Service } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { poolerSelector } from '../../api/naming.js';
import { clusterNames, ownedMeta, poolerPartLabel, type BuildContext } from './context.js';
import { serviceLabel } from './services.js';

/** The control Service's keelson.io/service label: the ServiceMonitor selects it beside the headless one. */
export const poolerControlServiceLabel = 'pooler-control';

export type PoolerServiceKind = 'rw' | 'ro' | 'control' | 'ro-control';

export const poolerServiceKinds: readonly PoolerServiceKind[] = ['rw', 'control'];

/**
 * rw: what applications connect to (PgBouncer on the PostgreSQL port); ro: the same for the
 * read-only pooler (when spec.pooler.readOnly.enabled), ro-control its pods as control is for the
 * others (scraped by the same ServiceMonitor; nothing pauses them). control: headless, every
 * pooler pod's address even before it is ready, for ha-node to pause and retarget them all, and
 * what the ServiceMonitor scrapes the pooler pods' exporters through.
 */
export function buildPoolerService(ctx: BuildContext, which: PoolerServiceKind): V1Service {
  const n = clusterNames(ctx);
  const selector = poolerSelector(ctx.cluster.metadata.name, which === 'ro' || which === 'ro-control');
  if (which === 'rw' || which === 'ro') {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: ownedMeta(ctx, which === 'ro' ? n.poolerReadOnlyService : n.poolerRwService, `pooler-service-${which}`, poolerPartLabel(which === 'ro')),
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'postgres', port: Ports.postgres, targetPort: Ports.pooler, protocol: 'TCP' }] },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(ctx, which === 'ro-control' ? n.poolerReadOnlyControlService : n.poolerControlService, `pooler-service-${which}`, {
      [serviceLabel]: poolerControlServiceLabel,
      ...poolerPartLabel(which === 'ro-control'),
    }),
    spec: {
      type: 'ClusterIP',
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector,
      ports: [
        { name: 'control', port: Ports.poolerControl, targetPort: Ports.poolerControl, protocol: 'TCP' },
        ...(ctx.cluster.spec.exporter.enabled ? [{ name: 'exporter', port: Ports.exporter, targetPort: Ports.exporter, protocol: 'TCP' }] : []),
      ],
    },
  };
}
