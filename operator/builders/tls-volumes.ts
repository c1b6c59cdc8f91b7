import type { V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { MountPaths, names } from '../naming.js';
import type { BuildContext } from './context.js';
import { tlsSecretName } from './tls-secrets.js';

/**
 * What the cluster's TLS Secrets add to a database pod: the server and replication Secrets as
 * volumes (no subPath, so the kubelet keeps them current), and where ha-node finds them. ha-node
 * copies the keys into files PostgreSQL accepts and reloads it when they change.
 */

const volumeNames = { server: 'server-tls', replication: 'replication-tls' } as const;

export function tlsVolumes(ctx: BuildContext): V1Volume[] {
  const name = ctx.cluster.metadata.name;
  // Readable by the database group (fsGroup) alone.
  return [
    { name: volumeNames.server, secret: { secretName: tlsSecretName(name, 'server'), defaultMode: 0o440 } },
    { name: volumeNames.replication, secret: { secretName: tlsSecretName(name, 'replication'), defaultMode: 0o440 } },
  ];
}

export function tlsMounts(): V1VolumeMount[] {
  return [
    { name: volumeNames.server, mountPath: MountPaths.serverTls, readOnly: true },
    { name: volumeNames.replication, mountPath: MountPaths.replicationTls, readOnly: true },
  ];
}

/**
 * ha-node's serverTlsDir, replicationTlsDir and peerHostSuffix (sidecar/ha-node/config.ts): a
 * member is <pod>.<cluster>-headless.<namespace>.svc to the others, a name the server certificate covers.
 */
export function tlsEnv(ctx: BuildContext): V1EnvVar[] {
  const { name, namespace } = ctx.cluster.metadata;
  return [
    { name: 'KEELSON_SERVER_TLS_DIR', value: MountPaths.serverTls },
    { name: 'KEELSON_REPLICATION_TLS_DIR', value: MountPaths.replicationTls },
    { name: 'KEELSON_PEER_HOST_SUFFIX', value: `${names(name).headlessService}.${namespace}.svc` },
  ];
}

/** A pooler pod mounts the server Secret: its certificate names the pooler Services (sidecar/pooler/tls-files.ts). */
export function poolerTlsVolumes(ctx: BuildContext): V1Volume[] {
  return [tlsVolumes(ctx)[0]!];
}

export function poolerTlsMounts(): V1VolumeMount[] {
  return [tlsMounts()[0]!];
}

export function poolerTlsEnv(): V1EnvVar[] {
  return [{ name: 'KEELSON_POOLER_TLS_DIR', value: MountPaths.serverTls }];
}
