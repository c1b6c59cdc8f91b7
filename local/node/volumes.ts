/**
 * Volumes without containers. Processes cannot see a private filesystem, so each volume is a host
 * folder under the node's --dir and each volumeMount's mountPath is mapped to it:
 *
 *   persistentVolumeClaim  <dir>/volumes/<namespace>/<claimName>   (survives pod restarts, like a PV;
 *                          as root a tmpfs of the claimed size: claim-filesystems.ts)
 *   emptyDir               <dir>/pods/<uid prefix>/volumes/<volume>   (removed with the pod)
 *   configMap / secret     <dir>/pods/<uid prefix>/volumes/<volume>/<key> (written before start,
 *                          kept current while the pod runs: projected-volumes.ts)
 *   hostPath               the path itself
 *
 * The mapping reaches the process two ways: every `command`/`args`/env value that contains a
 * mountPath (at the start or after `=`, `:`, `,`, a space or a double quote, as in a JSON value) is rewritten to the host folder, and
 * KEELSON_LOCAL_MOUNTS holds the JSON map {mountPath: hostFolder} for programs that read paths
 * from elsewhere. Manifests therefore stay exactly as they would be on a real cluster.
 */
import { chown, mkdir } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import type { V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EnvSources } from './env.js';
import { projectedSource, writeProjectedVolume } from './projected-volumes.js';

export interface MountMapping {
  mountPath: string;
  hostPath: string;
  readOnly: boolean;
}

/**
 * Scratch folder of one pod, named by a uid prefix: paths under it stay short, because unix
 * sockets (PostgreSQL's in an emptyDir) must fit in 107 bytes.
 */
export function podDirectory(nodeDir: string, pod: V1Pod): string {
  return join(nodeDir, 'pods', (pod.metadata?.uid ?? 'nouid').replace(/-/g, '').slice(0, 16));
}

/** Container logs, named like the kubelet's /var/log/pods/<ns>_<name>_<uid>. */
export function podLogDirectory(nodeDir: string, pod: V1Pod): string {
  const meta = pod.metadata ?? {};
  return join(nodeDir, 'logs', `${meta.namespace ?? 'default'}_${meta.name ?? 'unnamed'}_${meta.uid ?? 'nouid'}`);
}

export function claimDirectory(nodeDir: string, namespace: string, claimName: string): string {
  return join(nodeDir, 'volumes', namespace, claimName);
}

/** Host folder backing one pod volume. */
export function volumeHostPath(nodeDir: string, pod: V1Pod, volume: V1Volume): string {
  if (volume.persistentVolumeClaim) return claimDirectory(nodeDir, pod.metadata?.namespace ?? 'default', volume.persistentVolumeClaim.claimName);
  if (volume.hostPath) return volume.hostPath.path;
  return join(podDirectory(nodeDir, pod), 'volumes', volume.name);
}

export function containerMounts(nodeDir: string, pod: V1Pod, mounts: V1VolumeMount[] | undefined): MountMapping[] {
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  return (mounts ?? []).map((mount) => {
    const volume = volumes.get(mount.name);
    if (!volume) throw new Error(`volumeMount "${mount.name}" names no volume of the pod`);
    const base = volumeHostPath(nodeDir, pod, volume);
    return {
      mountPath: normalize(mount.mountPath).replace(/\/+$/, '') || '/',
      hostPath: mount.subPath ? join(base, mount.subPath) : base,
      readOnly: mount.readOnly ?? false,
    };
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Rewrites mount paths inside one string; longer mount paths win over their parents. */
export function rewriteMountPaths(value: string, mounts: MountMapping[]): string {
  const ordered = [...mounts].filter((m) => m.mountPath !== '/').sort((a, b) => b.mountPath.length - a.mountPath.length);
  if (ordered.length === 0) return value;
  const pattern = new RegExp(`(^|[=:,\\s"])(${ordered.map((m) => escapeRegExp(m.mountPath)).join('|')})(?=$|[/\\s,:;"'])`, 'g');
  const byPath = new Map(ordered.map((m) => [m.mountPath, m.hostPath]));
  return value.replace(pattern, (_match, lead: string, path: string) => `${lead}${byPath.get(path) ?? path}`);
}

/** Every container's mounts of the pod (init containers included), for paths in configMap files. */
export function podMounts(nodeDir: string, pod: V1Pod): MountMapping[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].flatMap((c) => containerMounts(nodeDir, pod, c.volumeMounts));
}

/** How a projected file's content is localized: configMap paths follow the pod's mounts, secrets stay as they are. */
export function projectedLocalizer(nodeDir: string, pod: V1Pod, kind: 'configMap' | 'secret'): (content: string) => string {
  if (kind !== 'configMap') return (content) => content;
  const mounts = podMounts(nodeDir, pod);
  return (content) => rewriteMountPaths(content, mounts);
}

/**
 * Creates the host folders of every pod volume and writes configMap/secret contents. Returns
 * false when a referenced object is missing (the kubelet keeps such pods in ContainerCreating).
 */
export async function prepareVolumes(
  nodeDir: string,
  pod: V1Pod,
  sources: EnvSources,
  owner?: { uid: number; gid: number },
): Promise<{ ready: true } | { ready: false; message: string }> {
  const namespace = pod.metadata?.namespace ?? 'default';
  for (const volume of pod.spec?.volumes ?? []) {
    const target = volumeHostPath(nodeDir, pod, volume);
    if (volume.hostPath) {
      if (volume.hostPath.type === 'DirectoryOrCreate') await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(target, { recursive: true });
    if (owner && (volume.persistentVolumeClaim || volume.emptyDir)) await chown(target, owner.uid, owner.gid);
    const ref = volume.configMap ?? volume.secret;
    const source = projectedSource(volume);
    if (!ref || !source) continue;
    const data = source.kind === 'configMap' ? await sources.configMap(namespace, source.name) : await sources.secret(namespace, source.name);
    if (!data) {
      if (ref.optional) continue;
      return { ready: false, message: `${source.kind === 'configMap' ? 'configmap' : 'secret'} "${source.name}" not found` };
    }
    await writeProjectedVolume(target, data, ref, owner, projectedLocalizer(nodeDir, pod, source.kind));
  }
  return { ready: true };
}
