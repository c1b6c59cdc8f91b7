import type { V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { HaNodeSettingsDocument } from '../../api/ha-node/settings-document.js';
import type { PoolerSettingsDocument } from '../../api/pooler/settings-document.js';
import { MountPaths, names } from '../../api/naming.js';
import type { BuildContext } from './context.js';
import { tlsSecretName } from './tls-secrets.js';

/**
 * What the cluster's TLS Secrets add to a database pod: the server and replication Secrets as
 * volumes (no subPath, so the kubelet keeps them current), and where ha-node finds them. ha-node
 * copies the keys into files PostgreSQL accepts and reloads it when they change.
 */

const volumeNames = { server: 'server-tls', replication: 'replication-tls', source: 'source-tls' } as const;

export function tlsVolumes(ctx: BuildContext): V1Volume[] {
  const name = ctx.cluster.metadata.name;
  // Readable by the database group (fsGroup) alone.
  return [
    { name: volumeNames.server, secret: { secretName: tlsSecretName(name, 'server'), defaultMode: 0o440 } },
    { name: volumeNames.replication, secret: { secretName: tlsSecretName(name, 'replication'), defaultMode: 0o440 } },
    // A standby cluster's copy of its source's replication Secret (reconcile/source-tls.ts); optional, so
    // every cluster has the same pod template and becoming a standby (a swap) rolls nothing.
    { name: volumeNames.source, secret: { secretName: names(name).sourceTlsSecret, defaultMode: 0o440, optional: true } },
  ];
}

export function tlsMounts(): V1VolumeMount[] {
  return [
    { name: volumeNames.server, mountPath: MountPaths.serverTls, readOnly: true },
    { name: volumeNames.replication, mountPath: MountPaths.replicationTls, readOnly: true },
    { name: volumeNames.source, mountPath: MountPaths.sourceTls, readOnly: true },
  ];
}

/**
 * The settings document's serverTlsDir, replicationTlsDir and peerHostSuffix (api/ha-node/settings-document.ts):
 * a member is <pod>.<cluster>-headless.<namespace>.svc to the others, a name the server certificate covers.
 */
export function haNodeTlsSettings(ctx: BuildContext): Pick<HaNodeSettingsDocument, 'serverTlsDir' | 'replicationTlsDir' | 'peerHostSuffix' | 'sourceTlsDir'> {
  const { name, namespace } = ctx.cluster.metadata;
  return {
    serverTlsDir: MountPaths.serverTls,
    replicationTlsDir: MountPaths.replicationTls,
    peerHostSuffix: `${names(name).headlessService}.${namespace}.svc`,
    sourceTlsDir: MountPaths.sourceTls,
  };
}

/** A pooler pod mounts the server Secret: its certificate names the pooler Services (sidecar/pooler/tls-files.ts). */
export function poolerTlsVolumes(ctx: BuildContext): V1Volume[] {
  return [tlsVolumes(ctx)[0]!];
}

export function poolerTlsMounts(): V1VolumeMount[] {
  return [tlsMounts()[0]!];
}

/** The pooler settings document's tlsDir (api/pooler/settings-document.ts). */
export function poolerTlsSettings(): Pick<PoolerSettingsDocument, 'tlsDir'> {
  return { tlsDir: MountPaths.serverTls };
}
