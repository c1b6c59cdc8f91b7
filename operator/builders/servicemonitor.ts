import type { V1ObjectMeta } from '@kubernetes/client-node';
import { HaNodePaths, ExporterPaths } from '../../lib/ports.js';
import { Labels } from '../naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';
import { serviceLabel } from './services.js';

/** monitoring.coreos.com/v1 ServiceMonitor; client-node has no class for it, so the shape we use. */
export interface ServiceMonitor {
  apiVersion: 'monitoring.coreos.com/v1';
  kind: 'ServiceMonitor';
  metadata: V1ObjectMeta;
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints: Array<{ port: string; path: string; interval: string }>;
  };
}

export const serviceMonitorGroup = 'monitoring.coreos.com';

/** Scrapes ha-node and (when enabled) the exporter through the headless Service. */
export function buildServiceMonitor(ctx: BuildContext): ServiceMonitor {
  const { spec, metadata } = ctx.cluster;
  const interval = spec.monitoring.serviceMonitor.interval;
  const endpoints = [{ port: 'ha', path: HaNodePaths.metrics, interval }];
  if (spec.exporter.enabled) endpoints.push({ port: 'exporter', path: ExporterPaths.metrics, interval });
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: ownedMeta(ctx, clusterNames(ctx).serviceMonitor, 'servicemonitor', spec.monitoring.serviceMonitor.labels),
    spec: {
      selector: { matchLabels: { [Labels.cluster]: metadata.name, [serviceLabel]: 'headless' } },
      namespaceSelector: { matchNames: [metadata.namespace] },
      endpoints,
    },
  };
}
