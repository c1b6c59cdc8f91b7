import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { Labels, podSelector, Roles } from '../../api/naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';

export type ServiceKind = 'rw' | 'ro' | 'r' | 'headless';

export const serviceKinds: readonly ServiceKind[] = ['rw', 'ro', 'r', 'headless'];

/** Label carried by each Service saying which of the four it is (the ServiceMonitor selects "headless"). */
export const serviceLabel = 'keelson.io/service';

function postgresPort(): V1ServicePort {
  return { name: 'postgres', port: Ports.postgres, targetPort: Ports.postgres, protocol: 'TCP' };
}

export function serviceName(ctx: BuildContext, which: ServiceKind): string {
  const n = clusterNames(ctx);
  return { rw: n.rwService, ro: n.roService, r: n.rService, headless: n.headlessService }[which];
}

/**
 * rw selects the pod ha-node labels primary, ro the replicas, r every instance; headless gives
 * pods stable DNS names for replication and exposes the metrics ports for scraping.
 */
export function buildService(ctx: BuildContext, which: ServiceKind): V1Service {
  const selector = podSelector(ctx.cluster.metadata.name);
  if (which === 'rw') selector[Labels.role] = Roles.primary;
  if (which === 'ro') selector[Labels.role] = Roles.replica;
  const headless = which === 'headless';
  const ports: V1ServicePort[] = [postgresPort()];
  if (headless) {
    ports.push({ name: 'ha', port: Ports.haNodeApi, targetPort: Ports.haNodeApi, protocol: 'TCP' });
    if (ctx.cluster.spec.exporter.enabled) ports.push({ name: 'exporter', port: Ports.exporter, targetPort: Ports.exporter, protocol: 'TCP' });
  }
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(ctx, serviceName(ctx, which), `service-${which}`, { [serviceLabel]: which }),
    spec: {
      type: 'ClusterIP',
      ...(headless ? { clusterIP: 'None', publishNotReadyAddresses: true } : {}),
      selector,
      ports,
    },
  };
}
