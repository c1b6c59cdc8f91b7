import type { V1Container, V1EnvVar, V1Probe, V1StatefulSet, V1Volume } from '@kubernetes/client-node';
import { ExporterPaths, HaNodePaths, Ports } from '../../lib/ports.js';
import { exporterPodEnv } from '../../api/exporter/node-options.js';
import { startSettingsDigest } from '../../api/ha-node/settings-document.js';
import { Annotations, ConfigKeys, ContainerNames, MountPaths, pgdataPath, podSelector, SecretKeys, VolumeNames, commonLabels } from '../../api/naming.js';
import { podAffinity } from './affinity.js';
import { backupMounts, backupVolumes } from './backup.js';
import { tlsMounts, tlsVolumes } from './tls-volumes.js';
import { exporterCaMount, exporterCaVolume, exporterPostgresUrl } from './exporter-tls.js';
import { backupTlsPorts } from './backup-tls.js';
import { haNodeConfig } from './configmap.js';
import { clusterNames, imageOf, ownedMeta, type BuildContext } from './context.js';
import { databasePoolerEnv, databasePoolerMounts, databasePoolerVolumes } from './pooler-wiring.js';
import { credentialSecretName, type CredentialKind } from './secrets.js';
import { walClaimTemplates, walEnv, walMounts } from './wal-volume.js';

/** uid/gid of the keelson user in the project image (see Dockerfile). */
export const databaseUid = 26;

export function httpProbe(path: string, port: number, periodSeconds: number, failureThreshold: number, scheme?: 'HTTPS'): V1Probe {
  return { httpGet: { path, port, ...(scheme ? { scheme } : {}) }, periodSeconds, timeoutSeconds: 5, failureThreshold, successThreshold: 1 };
}

/**
 * Restricted Pod Security profile for every container: no privilege escalation, no capabilities,
 * never root, and an immutable image filesystem (writes go to the data, run and tmp volumes).
 */
export const containerSecurity = { allowPrivilegeEscalation: false, runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };

export function fieldEnv(name: string, fieldPath: string): V1EnvVar {
  return { name, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } };
}

export function secretEnv(ctx: BuildContext, name: string, which: CredentialKind, key: string): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: credentialSecretName(ctx, which), key } } };
}

/**
 * Credentials ha-node uses itself. The application owner's password is not among them: it comes
 * from the mounted Secret (appCredentialsVolume), whose file follows a changed Secret.
 */
function credentialEnv(ctx: BuildContext): V1EnvVar[] {
  const kinds: Array<[string, CredentialKind]> = [
    ['SUPERUSER', 'superuser'],
    ['REPLICATION', 'replication'],
    ['API', 'api'],
  ];
  return kinds.flatMap(([prefix, which]) => [
    secretEnv(ctx, `KEELSON_${prefix}_USERNAME`, which, SecretKeys.username),
    secretEnv(ctx, `KEELSON_${prefix}_PASSWORD`, which, SecretKeys.password),
  ]);
}

/** Environment both containers share: who and where this pod is. */
function identityEnv(ctx: BuildContext): V1EnvVar[] {
  return [
    { name: 'KEELSON_CLUSTER', value: ctx.cluster.metadata.name },
    fieldEnv('KEELSON_NAMESPACE', 'metadata.namespace'),
    fieldEnv('POD_NAME', 'metadata.name'),
    fieldEnv('POD_NAMESPACE', 'metadata.namespace'),
    fieldEnv('POD_IP', 'status.podIP'),
  ];
}

function postgresContainer(ctx: BuildContext): V1Container {
  const { spec } = ctx.cluster;
  return {
    name: ContainerNames.postgres,
    image: imageOf(ctx),
    args: ['ha-node', '--config', `${MountPaths.config}/${ConfigKeys.haNode}`],
    // Listen on the pod address (not 0.0.0.0): probes, peers and Services all use it, and on the
    // single-machine stand-in every pod shares one host, where wildcard binds would collide.
    env: [
      ...identityEnv(ctx),
      { name: 'PGDATA', value: pgdataPath },
      { name: 'KEELSON_API_LISTEN', value: `$(POD_IP):${Ports.haNodeApi}` },
      { name: 'KEELSON_PG_LISTEN', value: '$(POD_IP)' },
      { name: 'KEELSON_APP_PASSWORD_FILE', value: `${MountPaths.appCredentials}/${SecretKeys.password}` },
      ...credentialEnv(ctx),
      ...databasePoolerEnv(ctx),
      ...walEnv(ctx),
    ],
    ports: [
      { name: 'postgres', containerPort: Ports.postgres, protocol: 'TCP' },
      { name: 'ha', containerPort: Ports.haNodeApi, protocol: 'TCP' },
      ...backupTlsPorts(ctx),
    ],
    // liveness never runs SQL (heartbeat freshness). The startup probe asks every second, so a pod
    // is probed ready about a second after ha-node listens, and keeps a 1 h budget for WAL replay.
    // The API serves HTTPS (the server Secret's certificate; the kubelet verifies none) and answers
    // liveness while it waits for that certificate.
    startupProbe: httpProbe(HaNodePaths.liveness, Ports.haNodeApi, 1, 3600, 'HTTPS'),
    livenessProbe: httpProbe(HaNodePaths.liveness, Ports.haNodeApi, 10, 3, 'HTTPS'),
    // Readiness every second: a new primary whose pod was not ready (a replica that had lost its
    // stream) joins -rw a second after its promotion at worst; six failures still make 6 s.
    readinessProbe: httpProbe(HaNodePaths.readiness, Ports.haNodeApi, 1, 6, 'HTTPS'),
    resources:
      spec.resources.requests || spec.resources.limits ? { requests: stringify(spec.resources.requests), limits: stringify(spec.resources.limits) } : undefined,
    volumeMounts: [
      { name: VolumeNames.data, mountPath: MountPaths.data },
      { name: VolumeNames.config, mountPath: MountPaths.config, readOnly: true },
      { name: VolumeNames.run, mountPath: MountPaths.run },
      { name: VolumeNames.tmp, mountPath: MountPaths.tmp },
      { name: VolumeNames.appCredentials, mountPath: MountPaths.appCredentials, readOnly: true },
      ...backupMounts(ctx),
      ...databasePoolerMounts(ctx),
      ...walMounts(ctx),
      ...tlsMounts(),
    ],
    securityContext: containerSecurity,
  };
}

function exporterContainer(ctx: BuildContext): V1Container {
  const collectors = ctx.cluster.spec.exporter.collectors;
  return {
    name: ContainerNames.exporter,
    image: imageOf(ctx),
    // Built-in collectors unless the spec names a ConfigMap (mounted as a directory of YAML files).
    args: ['exporter', `--web.listen-address=$(POD_IP):${Ports.exporter}`, ...(collectors ? ['--config', MountPaths.collectors] : [])],
    env: [
      ...identityEnv(ctx),
      // No credentials in the URL: the PostgreSQL client takes PGUSER/PGPASSWORD from the Secret.
      { name: 'PG_EXPORTER_URL', value: exporterPostgresUrl(ctx) },
      secretEnv(ctx, 'PGUSER', 'superuser', SecretKeys.username),
      secretEnv(ctx, 'PGPASSWORD', 'superuser', SecretKeys.password),
      ...exporterPodEnv,
    ],
    ports: [{ name: 'exporter', containerPort: Ports.exporter, protocol: 'TCP' }],
    // A sidecar must never lengthen a database outage. The exporter's /liveness and /readiness
    // follow PostgreSQL (503 while it is down), so liveness asks /version, which the exporter
    // answers itself, and there is no readiness probe: a pod is Ready only when every container
    // is, and the exporter's view of PostgreSQL must not take a healthy primary out of -rw.
    livenessProbe: httpProbe(ExporterPaths.version, Ports.exporter, 10, 3),
    volumeMounts: [
      { name: VolumeNames.tmp, mountPath: MountPaths.tmp },
      exporterCaMount(),
      ...(collectors ? [{ name: VolumeNames.collectors, mountPath: MountPaths.collectors, readOnly: true }] : []),
    ],
    securityContext: containerSecurity,
  };
}

function stringify(values: Record<string, string | number> | undefined): Record<string, string> | undefined {
  if (!values) return undefined;
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, String(value)]));
}

function volumes(ctx: BuildContext): V1Volume[] {
  const collectors = ctx.cluster.spec.exporter.collectors;
  const list: V1Volume[] = [
    { name: VolumeNames.config, configMap: { name: clusterNames(ctx).configMap } },
    { name: VolumeNames.run, emptyDir: {} },
    { name: VolumeNames.tmp, emptyDir: {} },
    // Only the password, readable by the database group (fsGroup) alone; no subPath, so the kubelet keeps it current.
    {
      name: VolumeNames.appCredentials,
      secret: { secretName: credentialSecretName(ctx, 'app'), items: [{ key: SecretKeys.password, path: SecretKeys.password }], defaultMode: 0o440 },
    },
    ...databasePoolerVolumes(ctx),
  ];
  list.push(...backupVolumes(ctx), ...tlsVolumes(ctx));
  if (ctx.cluster.spec.exporter.enabled) list.push(exporterCaVolume(ctx));
  if (ctx.cluster.spec.exporter.enabled && collectors) {
    list.push({
      name: VolumeNames.collectors,
      configMap: { name: collectors.configMapName, ...(collectors.key ? { items: [{ key: collectors.key, path: collectors.key }] } : {}) },
    });
  }
  return list;
}

/**
 * One StatefulSet per cluster. Updates use OnDelete: the operator itself replaces pods replicas
 * first, then switches over, then replaces the old primary (an ordinal rollout cannot do that).
 */
export function buildStatefulSet(ctx: BuildContext): V1StatefulSet {
  const { spec, metadata } = ctx.cluster;
  const n = clusterNames(ctx);
  const selector = podSelector(metadata.name);
  const containers = [postgresContainer(ctx)];
  if (spec.exporter.enabled) containers.push(exporterContainer(ctx));
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: ownedMeta(ctx, n.statefulSet, 'database'),
    spec: {
      serviceName: n.headlessService,
      replicas: spec.instances,
      // Every member starts at once: the initialize key decides who creates the cluster, with a
      // head start for ordinal 0 (ha-node's bootstrap-order.ts); the others clone as soon as a
      // leader exists. Immutable: clusters created with OrderedReady keep it (keepImmutableFields).
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: { ...commonLabels(metadata.name, 'database'), ...selector },
          annotations: { [Annotations.haNodeStartSettingsHash]: startSettingsDigest(haNodeConfig(ctx)) },
        },
        spec: {
          serviceAccountName: n.serviceAccount,
          terminationGracePeriodSeconds: 60,
          securityContext: {
            runAsUser: databaseUid,
            runAsGroup: databaseUid,
            fsGroup: databaseUid,
            runAsNonRoot: true,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers,
          volumes: volumes(ctx),
          affinity: podAffinity(ctx.cluster),
          tolerations: spec.scheduling.tolerations,
          nodeSelector: spec.scheduling.nodeSelector,
          topologySpreadConstraints: spec.scheduling.topologySpreadConstraints,
        },
      },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: VolumeNames.data, labels: selector },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: spec.storage.storageClass,
            resources: { requests: { storage: spec.storage.size } },
          },
        },
        ...walClaimTemplates(ctx, selector),
      ],
    },
  };
}
