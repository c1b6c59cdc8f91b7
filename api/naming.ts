import { apiVersion, kind, type DatabaseCluster } from './crd/types.js';
import type { V1OwnerReference } from '@kubernetes/client-node';

/**
 * Every name, label, annotation and selector the operator puts on Kubernetes objects. Builders,
 * the reconciler, ha-node and tests take them from here so they cannot drift apart.
 */

export const Labels = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  partOf: 'app.kubernetes.io/part-of',
  cluster: 'keelson.io/cluster',
  /** Set by ha-node on its own pod: primary | replica. Services select on it. */
  role: 'keelson.io/role',
  /** Which builder made the object, so observed objects map back to their desired counterpart. */
  owned: 'keelson.io/owned-kind',
  /**
   * On every object the operator makes for the pooler (rw: the read-write pooler's and the pooler
   * role's Secret; ro: the read-only pooler's), so the ones it no longer wants can be found and removed.
   */
  pooler: 'keelson.io/pooler',
} as const;

/** Values of the pooler label: which pooler an object belongs to. */
export const PoolerParts = { readWrite: 'rw', readOnly: 'ro' } as const;

export const Annotations = {
  /** Hash of the desired object; equal hash means nothing to write. */
  specHash: 'keelson.io/spec-hash',
  /** Hash of the postgres configuration that needs a restart; a change rolls the pods. */
  restartHash: 'keelson.io/restart-hash',
  /** Hash of the ha-node settings read only at start (backup, pooler ports); a change rolls the pods. */
  haNodeStartSettingsHash: 'keelson.io/ha-node-start-settings-hash',
  /** Marks a Secret whose passwords must never be regenerated. */
  generatedSecret: 'keelson.io/generated',
} as const;

export const Finalizer = 'keelson.io/cleanup';
export const ManagedByValue = 'keelson-operator';
export const FieldManager = 'keelson-operator';

export const Roles = { primary: 'primary', replica: 'replica' } as const;

export const ContainerNames = { postgres: 'postgres', exporter: 'exporter', pooler: 'pgbouncer' } as const;

export const VolumeNames = {
  data: 'pgdata',
  config: 'config',
  collectors: 'collectors',
  run: 'run',
  tmp: 'tmp',
  appCredentials: 'app-credentials',
  poolerCredentials: 'pooler-credentials',
  poolerRun: 'pgbouncer-run',
} as const;

export const MountPaths = {
  data: '/var/lib/postgresql/data',
  config: '/etc/keelson',
  collectors: '/etc/keelson/collectors',
  /** The <cluster>-app Secret's password (a Secret volume: the kubelet refreshes it when the Secret changes). */
  appCredentials: '/etc/keelson-app',
  /** The <cluster>-pooler Secret's password: the auth_query role's (database pods and pooler pods). */
  poolerCredentials: '/etc/keelson-pooler',
  /** pgbouncer.ini, its auth file and socket (an emptyDir of the pooler pod). */
  poolerRun: '/var/run/pgbouncer',
  run: '/var/run/postgresql',
  tmp: '/tmp',
  /** One folder per S3 repository's credentials (and CA) Secret: <mount>/<repository>[-ca]/<key>. */
  backupSecrets: '/etc/keelson-backup',
  /** One folder per filesystem repository's volume: <mount>/<repository>/<namespace>/<cluster>. */
  backupRepositories: '/var/lib/keelson-backup',
  /** The cluster CA of pgBackRest's TLS server (the <cluster>-backup-tls Secret), with spec.backup.target prefer-standby. */
  backupTls: '/etc/keelson-backup-tls',
  /** The <cluster>-server-tls and <cluster>-replication-tls Secrets (operator/certificates/). */
  serverTls: '/etc/keelson-tls/server',
  replicationTls: '/etc/keelson-tls/replication',
  /** The server Secret's ca.crt alone, for the exporter (it verifies PostgreSQL and needs no key). */
  serverCa: '/etc/keelson-tls/server-ca',
  /** A standby cluster's copy of its source's replication client Secret (<cluster>-source-tls; operator/reconcile/source-tls.ts). */
  sourceTls: '/etc/keelson-tls/source',
} as const;

/** The Secret holding the cluster CA (certificate and key) from which members issue their pgBackRest TLS certificates. */
export function backupTlsSecretName(clusterName: string): string {
  return `${clusterName}-backup-tls`;
}

/** ca.crt: the trust bundle, its first certificate signs with ca.key; next.*: a staged CA, not mounted (see reconcile/backup-ca-rotation.ts). */
export const BackupTlsKeys = { cert: 'ca.crt', key: 'ca.key', nextCert: 'next.crt', nextKey: 'next.key' } as const;

/** When the operator staged the next backup TLS CA (on the Secret). */
export const backupCaStagedAnnotation = 'keelson.io/backup-ca-staged-at';

/**
 * The cluster's TLS Secrets (operator/certificates/): ca.crt and ca.key of the operator's CA (never
 * mounted); tls.crt and tls.key of the server and of the replication client with the trust bundles
 * ca.crt (server CA) and client-ca.crt (client CA), the only ones pods mount.
 */
export const TlsKeys = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt', caKey: 'ca.key', clientCa: 'client-ca.crt' } as const;

/** When the operator staged the next cluster CA (on the <cluster>-ca Secret). */
export const clusterCaStagedAnnotation = 'keelson.io/ca-staged-at';

/**
 * On a DatabaseCluster: any new value re-issues the server and replication certificates; on the
 * operator's certificate Secrets: the value they were issued for.
 */
export const rotateCertificatesAnnotation = 'keelson.io/rotate-certificates';

/**
 * On a DatabaseCluster: any new value starts a rotation of the operator's cluster CA (stage, then
 * switch); on the `<cluster>-ca` Secret: the value last honoured.
 */
export const rotateCaAnnotation = 'keelson.io/rotate-ca';

/** The PersistentVolumeClaim of a filesystem backup repository: shared by the namespace's clusters, kept when one is deleted. */
export function backupClaimName(repository: string): string {
  return `keelson-backup-${repository}`;
}

/** The data directory inside the volume (a subdirectory so lost+found never bothers initdb). */
/**
 * The Backup object a schedule creates for one cron time (<cluster>-<type>-<YYYYMMDDHHMM>, UTC), or
 * the first backup taken once archiving works (<cluster>-initial). One name per time, so a repeated
 * pass cannot create two.
 */
export function scheduledBackupName(clusterName: string, type: 'full' | 'diff' | 'incr' | 'initial', dueAt?: string): string {
  if (type === 'initial' || !dueAt) return `${clusterName}-initial`;
  return `${clusterName}-${type}-${dueAt.replace(/[-:T]/g, '').slice(0, 12)}`;
}

export const pgdataPath = `${MountPaths.data}/pgdata`;

export const ConfigKeys = { haNode: 'ha-node.yaml', pooler: 'pooler.yaml', poolerReadOnly: 'pooler-ro.yaml' } as const;

export const SecretKeys = { username: 'username', password: 'password' } as const;

/** PostgreSQL roles ha-node itself uses; the application owner may be neither (the CRD's CEL rule repeats them). */
export const RoleNames = { superuser: 'postgres', replication: 'replicator', pooler: 'keelson_pooler' } as const;

export function names(clusterName: string) {
  return {
    statefulSet: clusterName,
    serviceAccount: clusterName,
    role: clusterName,
    roleBinding: clusterName,
    podDisruptionBudget: clusterName,
    serviceMonitor: clusterName,
    configMap: `${clusterName}-config`,
    superuserSecret: `${clusterName}-superuser`,
    replicationSecret: `${clusterName}-replication`,
    appSecret: `${clusterName}-app`,
    apiSecret: `${clusterName}-api`,
    caSecret: `${clusterName}-ca`,
    serverTlsSecret: `${clusterName}-server-tls`,
    replicationTlsSecret: `${clusterName}-replication-tls`,
    sourceTlsSecret: `${clusterName}-source-tls`,
    headlessService: `${clusterName}-headless`,
    rwService: `${clusterName}-rw`,
    roService: `${clusterName}-ro`,
    rService: `${clusterName}-r`,
    leaderLease: `${clusterName}-leader`,
    poolerDeployment: `${clusterName}-pooler`,
    poolerConfigMap: `${clusterName}-pooler-config`,
    poolerSecret: `${clusterName}-pooler`,
    poolerRwService: `${clusterName}-pooler-rw`,
    /** Headless: resolves to every pooler pod, so ha-node finds them all at each switchover. */
    poolerControlService: `${clusterName}-pooler-control`,
    poolerPodDisruptionBudget: `${clusterName}-pooler`,
    /** The read-only pooler: its Deployment, Service and PDB share the name. */
    poolerReadOnlyDeployment: `${clusterName}-pooler-ro`,
    poolerReadOnlyService: `${clusterName}-pooler-ro`,
    poolerReadOnlyControlService: `${clusterName}-pooler-ro-control`,
    poolerReadOnlyPodDisruptionBudget: `${clusterName}-pooler-ro`,
    pod: (ordinal: number) => `${clusterName}-${ordinal}`,
  };
}

export type ClusterNames = ReturnType<typeof names>;

/** Ordinal of a pod name "<cluster>-N", or undefined when it is not one of this cluster's pods. */
export function ordinalOf(clusterName: string, podName: string): number | undefined {
  const prefix = `${clusterName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

/** Values of the component label on a cluster's pods. */
export const PodComponents = { database: 'database', pooler: 'pooler', poolerReadOnly: 'pooler-ro' } as const;

/** Labels every object of a cluster carries. */
export function commonLabels(clusterName: string, component: string): Record<string, string> {
  return {
    [Labels.name]: 'keelson',
    [Labels.instance]: clusterName,
    [Labels.component]: component,
    [Labels.managedBy]: ManagedByValue,
    [Labels.partOf]: 'keelson',
    [Labels.cluster]: clusterName,
  };
}

/** Selector of the instance pods (also the scale subresource's status.selector). */
export function podSelector(clusterName: string): Record<string, string> {
  return { [Labels.cluster]: clusterName, [Labels.component]: PodComponents.database };
}

/** Selector of the pooler pods (the read-only pooler's with `readOnly`: ha-node never pauses those). */
export function poolerSelector(clusterName: string, readOnly = false): Record<string, string> {
  return { [Labels.cluster]: clusterName, [Labels.component]: readOnly ? PodComponents.poolerReadOnly : PodComponents.pooler };
}

export function selectorString(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** The owner reference that ties an object to its DatabaseCluster (GC deletes it with the cluster). */
export function ownerReference(cluster: DatabaseCluster): V1OwnerReference {
  return {
    apiVersion,
    kind,
    name: cluster.metadata.name,
    uid: cluster.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The default image: the project image at the operator's own version. */
export function defaultImage(version: string): string {
  return `ghcr.io/keelson/keelson:${version}`;
}
