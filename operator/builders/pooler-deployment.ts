import { createHash } from 'node:crypto';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { ExporterPaths, PoolerPaths, Ports } from '../../lib/ports.js';
import { exporterPodEnv } from '../../api/exporter/node-options.js';
import { commonLabels, ConfigKeys, ContainerNames, MountPaths, PodComponents, poolerSelector, SecretKeys, TlsKeys, VolumeNames } from '../../api/naming.js';
import { exporterCaMount, exporterCaVolume } from './exporter-tls.js';
import { clusterNames, imageOf, ownedMeta, poolerPartLabel, type BuildContext } from './context.js';
import { poolerConfig } from './pooler-configmap.js';
import { poolerCredentialsVolume } from './pooler-wiring.js';
import { poolerTlsMounts, poolerTlsVolumes } from './tls-volumes.js';
import { containerSecurity, databaseUid, fieldEnv, httpProbe, secretEnv } from './statefulset.js';

/** Annotation on the pod template: a changed pooler configuration rolls the pooler pods. */
export const poolerConfigHashAnnotation = 'keelson.io/pooler-config-hash';

function poolerContainer(ctx: BuildContext, readOnly: boolean): V1Container {
  const { resources } = ctx.cluster.spec.pooler;
  const stringify = (values: Record<string, string | number> | undefined): Record<string, string> | undefined =>
    values ? Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])) : undefined;
  return {
    name: ContainerNames.pooler,
    image: imageOf(ctx),
    args: ['pooler', '--config', `${MountPaths.config}/${readOnly ? ConfigKeys.poolerReadOnly : ConfigKeys.pooler}`],
    // Pod address, not 0.0.0.0: on the single-machine stand-in every pod shares one host.
    env: [
      fieldEnv('POD_IP', 'status.podIP'),
      { name: 'KEELSON_POOLER_LISTEN', value: `$(POD_IP):${Ports.pooler}` },
      { name: 'KEELSON_POOLER_CONTROL_LISTEN', value: `$(POD_IP):${Ports.poolerControl}` },
      // Paths as environment values, where a node that maps volumes to other folders (the
      // single-machine stand-in) can rewrite them; a path inside the ConfigMap it could not.
      { name: 'KEELSON_POOLER_RUN_DIR', value: MountPaths.poolerRun },
      { name: 'KEELSON_POOLER_PASSWORD_FILE', value: `${MountPaths.poolerCredentials}/${SecretKeys.password}` },
      // The control API takes the cluster's API credentials, as ha-node's endpoints do.
      secretEnv(ctx, 'KEELSON_API_USERNAME', 'api', SecretKeys.username),
      secretEnv(ctx, 'KEELSON_API_PASSWORD', 'api', SecretKeys.password),
    ],
    ports: [
      { name: 'postgres', containerPort: Ports.pooler, protocol: 'TCP' },
      { name: 'control', containerPort: Ports.poolerControl, protocol: 'TCP' },
    ],
    // Ready once PgBouncer accepts connections; alive while the control API answers.
    readinessProbe: { tcpSocket: { port: Ports.pooler }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
    livenessProbe: httpProbe(PoolerPaths.healthz, Ports.poolerControl, 10, 3),
    resources: resources.requests || resources.limits ? { requests: stringify(resources.requests), limits: stringify(resources.limits) } : undefined,
    volumeMounts: [
      { name: VolumeNames.config, mountPath: MountPaths.config, readOnly: true },
      { name: VolumeNames.poolerCredentials, mountPath: MountPaths.poolerCredentials, readOnly: true },
      { name: VolumeNames.poolerRun, mountPath: MountPaths.poolerRun },
      ...poolerTlsMounts(),
    ],
    securityContext: containerSecurity,
  };
}

/**
 * The exporter beside PgBouncer (when spec.exporter.enabled): it reads PgBouncer's admin console
 * (database "pgbouncer") as the pooler role, which may only run SHOW there, with the built-in
 * pgbouncer collectors: pools, clients waiting, and whether the pooler is paused. Over TLS,
 * verify-full against the cluster CA by the pooler Service's name (PgBouncer serves the server
 * certificate, which names it) while its own pod's address is dialled.
 */
function poolerExporterContainer(ctx: BuildContext, readOnly: boolean): V1Container {
  const { namespace } = ctx.cluster.metadata;
  const n = clusterNames(ctx);
  const serverName = `${readOnly ? n.poolerReadOnlyService : n.poolerRwService}.${namespace}.svc`;
  return {
    name: ContainerNames.exporter,
    image: imageOf(ctx),
    args: ['exporter', `--web.listen-address=$(POD_IP):${Ports.exporter}`],
    env: [
      fieldEnv('POD_IP', 'status.podIP'),
      {
        name: 'PG_EXPORTER_URL',
        value: `postgresql://${serverName}:${Ports.pooler}/pgbouncer?hostaddr=$(POD_IP)&sslmode=verify-full&sslrootcert=${MountPaths.serverCa}/${TlsKeys.ca}`,
      },
      secretEnv(ctx, 'PGUSER', 'pooler', SecretKeys.username),
      secretEnv(ctx, 'PGPASSWORD', 'pooler', SecretKeys.password),
      ...exporterPodEnv,
    ],
    ports: [{ name: 'exporter', containerPort: Ports.exporter, protocol: 'TCP' }],
    volumeMounts: [exporterCaMount()],
    // As in the database pods: alive while it answers itself; no readiness (it must never take a pooler out of its Service).
    livenessProbe: httpProbe(ExporterPaths.version, Ports.exporter, 10, 3),
    securityContext: containerSecurity,
  };
}

/**
 * The PgBouncer pods: `keelson pooler` from the cluster image, spec.pooler.instances of them; with
 * `readOnly` the read-only pooler's (another component label, so ha-node tells them apart).
 */
export function buildPoolerDeployment(ctx: BuildContext, readOnly = false): V1Deployment {
  const { metadata, spec } = ctx.cluster;
  const n = clusterNames(ctx);
  const selector = poolerSelector(metadata.name, readOnly);
  const component = readOnly ? PodComponents.poolerReadOnly : PodComponents.pooler;
  const configHash = createHash('sha256')
    .update(JSON.stringify(poolerConfig(ctx, readOnly)))
    .digest('hex')
    .slice(0, 16);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: ownedMeta(ctx, readOnly ? n.poolerReadOnlyDeployment : n.poolerDeployment, component, poolerPartLabel(readOnly)),
    spec: {
      replicas: spec.pooler.instances,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: { ...commonLabels(metadata.name, component), ...selector }, annotations: { [poolerConfigHashAnnotation]: configHash } },
        spec: {
          serviceAccountName: n.serviceAccount,
          automountServiceAccountToken: false,
          securityContext: {
            runAsUser: databaseUid,
            runAsGroup: databaseUid,
            fsGroup: databaseUid,
            runAsNonRoot: true,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [poolerContainer(ctx, readOnly), ...(spec.exporter.enabled ? [poolerExporterContainer(ctx, readOnly)] : [])],
          volumes: [
            { name: VolumeNames.config, configMap: { name: n.poolerConfigMap } },
            poolerCredentialsVolume(ctx),
            { name: VolumeNames.poolerRun, emptyDir: {} },
            ...poolerTlsVolumes(ctx),
            ...(spec.exporter.enabled ? [exporterCaVolume(ctx)] : []),
          ],
          tolerations: spec.scheduling.tolerations,
          nodeSelector: spec.scheduling.nodeSelector,
        },
      },
    },
  };
}
