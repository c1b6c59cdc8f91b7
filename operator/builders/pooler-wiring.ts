import type { V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { MountPaths, SecretKeys, VolumeNames } from '../../api/naming.js';
import type { HaNodeSettingsDocument } from '../../api/ha-node/settings-document.js';
import { clusterNames, type BuildContext } from './context.js';

/**
 * What the database pods need when the pooler is enabled: how ha-node finds the poolers (the
 * cluster's pooler pods, from the pod list it already watches, at their control port: settings
 * document keys) and the pooler role's password, from which the primary keeps the auth_query role
 * (a mounted file named in the environment). Nothing when it is disabled. The read-only pooler's
 * pods are found the same way; their port is set whether or not readOnly is enabled, so turning
 * it on or off never rolls the database pods.
 */
export function databasePoolerPorts(ctx: BuildContext): Pick<HaNodeSettingsDocument, 'poolerPods' | 'poolerReadOnlyPods'> {
  if (!ctx.cluster.spec.pooler.enabled) return {};
  return { poolerPods: Ports.poolerControl, poolerReadOnlyPods: Ports.poolerControl };
}

export function databasePoolerEnv(ctx: BuildContext): V1EnvVar[] {
  if (!ctx.cluster.spec.pooler.enabled) return [];
  return [{ name: 'KEELSON_POOLER_PASSWORD_FILE', value: `${MountPaths.poolerCredentials}/${SecretKeys.password}` }];
}

export function databasePoolerMounts(ctx: BuildContext): V1VolumeMount[] {
  if (!ctx.cluster.spec.pooler.enabled) return [];
  return [{ name: VolumeNames.poolerCredentials, mountPath: MountPaths.poolerCredentials, readOnly: true }];
}

/** The <cluster>-pooler Secret's password alone, readable by the pod's group (fsGroup). */
export function poolerCredentialsVolume(ctx: BuildContext): V1Volume {
  return {
    name: VolumeNames.poolerCredentials,
    secret: { secretName: clusterNames(ctx).poolerSecret, items: [{ key: SecretKeys.password, path: SecretKeys.password }], defaultMode: 0o440 },
  };
}

export function databasePoolerVolumes(ctx: BuildContext): V1Volume[] {
  return ctx.cluster.spec.pooler.enabled ? [poolerCredentialsVolume(ctx)] : [];
}
