import type { V1ObjectMeta } from '@kubernetes/client-node';
import { HaNodePaths, ExporterPaths, PoolerPaths } from '../../lib/ports.js';
import { Labels, names, TlsKeys } from '../../api/naming.js';
import { clusterNames, ownedMeta, type BuildContext } from './context.js';
import { poolerControlServiceLabel } from './pooler-services.js';
import { serviceLabel } from './services.js';

/** monitoring.coreos.com/v1 ServiceMonitor; client-node has no class for it, so the shape we use. */
export interface ServiceMonitor {
  apiVersion: 'monitoring.coreos.com/v1';
  kind: 'ServiceMonitor';
  metadata: V1ObjectMeta;
  spec: {
    selector: { matchLabels: Record<string, string>; matchExpressions?: Array<{ key: string; operator: 'In'; values: string[] }> };
    namespaceSelector: { matchNames: string[] };
    endpoints: ServiceMonitorEndpoint[];
  };
}

export interface RelabelConfig {
  sourceLabels: string[];
  targetLabel: string;
}

export interface ServiceMonitorEndpoint {
  port: string;
  path: string;
  interval: string;
  honorLabels: boolean;
  relabelings: RelabelConfig[];
  scheme?: 'https';
  /** prometheus-operator's SafeTLSConfig: the CA from a Secret, the name the certificate must carry. */
  tlsConfig?: { ca: { secret: { name: string; key: string } }; serverName: string };
}

/**
 * ha-node serves HTTPS with the server certificate: Prometheus checks it against the server
 * Secret's CA bundle. Every pod presents the same certificate, and a ServiceMonitor has one
 * serverName for all targets, so the name checked is the -rw Service's (which the certificate
 * carries), not each pod's.
 */
function haNodeTls(clusterName: string, namespace: string): Pick<ServiceMonitorEndpoint, 'scheme' | 'tlsConfig'> {
  const n = names(clusterName);
  return { scheme: 'https', tlsConfig: { ca: { secret: { name: n.serverTlsSecret, key: TlsKeys.ca } }, serverName: `${n.rwService}.${namespace}.svc` } };
}

/** Prometheus's name for a pod label in service discovery: every character outside [a-zA-Z0-9_] becomes "_". */
export function podLabelMeta(label: string): string {
  return `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

/**
 * Every sample of a member carries scope (the cluster) and name (the pod), the two labels ha-node
 * puts on its own samples, so one dashboard variable and one alert rule select a cluster across ha_*,
 * pg_* and `up`. ha-node's own labels win on its endpoint (honorLabels); on the exporter's they are
 * the target's, and a custom collector's column of the same name is kept as exported_<name>.
 */
export const memberRelabelings: readonly RelabelConfig[] = [
  { sourceLabels: [podLabelMeta(Labels.cluster)], targetLabel: 'scope' },
  { sourceLabels: ['__meta_kubernetes_pod_name'], targetLabel: 'name' },
];

export const serviceMonitorGroup = 'monitoring.coreos.com';

/**
 * Scrapes ha-node and (when enabled) the exporter through the headless Service, and with the
 * pooler enabled the pooler pods (their exporter, and the pooler's own samples on the control
 * port) through the pooler control Service.
 */
export function buildServiceMonitor(ctx: BuildContext): ServiceMonitor {
  const { spec, metadata } = ctx.cluster;
  const interval = spec.monitoring.serviceMonitor.interval;
  const relabelings = memberRelabelings.map((r) => ({ ...r, sourceLabels: [...r.sourceLabels] }));
  const endpoints: ServiceMonitorEndpoint[] = [
    { port: 'ha', path: HaNodePaths.metrics, interval, honorLabels: true, relabelings, ...haNodeTls(metadata.name, metadata.namespace) },
  ];
  if (spec.exporter.enabled) endpoints.push({ port: 'exporter', path: ExporterPaths.metrics, interval, honorLabels: false, relabelings });
  // The pooler's own samples (paused, reaching PostgreSQL) on its control port.
  if (spec.pooler.enabled) endpoints.push({ port: 'control', path: PoolerPaths.metrics, interval, honorLabels: false, relabelings });
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: ownedMeta(ctx, clusterNames(ctx).serviceMonitor, 'servicemonitor', spec.monitoring.serviceMonitor.labels),
    spec: {
      selector: spec.pooler.enabled
        ? {
            matchLabels: { [Labels.cluster]: metadata.name },
            matchExpressions: [{ key: serviceLabel, operator: 'In', values: ['headless', poolerControlServiceLabel] }],
          }
        : { matchLabels: { [Labels.cluster]: metadata.name, [serviceLabel]: 'headless' } },
      namespaceSelector: { matchNames: [metadata.namespace] },
      endpoints,
    },
  };
}
