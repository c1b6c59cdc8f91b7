import type { V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { MountPaths, names, TlsKeys } from '../../api/naming.js';
import type { BuildContext } from './context.js';
import { tlsSecretName } from './tls-secrets.js';

/**
 * How the exporter sidecar reaches PostgreSQL: over TLS with verify-full against the cluster's
 * server CA, by the pod's name under the headless Service (a name the server certificate covers)
 * while connecting to the pod's address (`hostaddr`, so no DNS is needed:
 * sidecar/exporter/scrape/server-tls.ts). It mounts the server Secret's `ca.crt` alone, never the key.
 */

const volumeName = 'server-ca';

export function exporterCaVolume(ctx: BuildContext): V1Volume {
  const secretName = tlsSecretName(ctx.cluster.metadata.name, 'server');
  // No subPath: the kubelet keeps the file current through a CA rotation, and the exporter reads it for each new connection.
  return { name: volumeName, secret: { secretName, items: [{ key: TlsKeys.ca, path: TlsKeys.ca }], defaultMode: 0o440 } };
}

export function exporterCaMount(): V1VolumeMount {
  return { name: volumeName, mountPath: MountPaths.serverCa, readOnly: true };
}

/** PG_EXPORTER_URL, with $(POD_NAME) and $(POD_IP) from the container's environment; credentials come from PGUSER/PGPASSWORD. */
export function exporterPostgresUrl(ctx: BuildContext): string {
  const { name, namespace } = ctx.cluster.metadata;
  const host = `$(POD_NAME).${names(name).headlessService}.${namespace}.svc`;
  return `postgresql://${host}:${Ports.postgres}/postgres?hostaddr=$(POD_IP)&sslmode=verify-full&sslrootcert=${MountPaths.serverCa}/${TlsKeys.ca}`;
}
