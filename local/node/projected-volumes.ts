/**
 * configMap and secret volumes: the files of one object's keys in the volume's host folder,
 * written so that a reader never sees half a file (a temporary file renamed over the old one),
 * rewritten only where the content changed, and with keys that left the object removed. A kubelet
 * keeps these volumes current while the pod runs (within about a minute of a change); the node
 * agent does the same from its watches, so rotated credentials reach running pods here too.
 * Volumes reached only through a `subPath` mount are not updated, as on a kubelet.
 * A configMap's files may name paths inside the pod (a settings file naming a mounted folder):
 * pods here are processes on the host, so those paths are rewritten to the host folders as the
 * agent rewrites the environment (secrets are written as they are).
 */
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import type { V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node';

export type ProjectedKind = 'secret' | 'configMap';

/** Which object a volume projects, if it is a configMap or secret volume. */
export function projectedSource(volume: V1Volume): { kind: ProjectedKind; name: string } | undefined {
  if (volume.configMap) return { kind: 'configMap', name: volume.configMap.name ?? '' };
  if (volume.secret) return { kind: 'secret', name: volume.secret.secretName ?? '' };
  return undefined;
}

interface ProjectedFile {
  path: string;
  content: string;
  mode?: number;
}

/** The files of a volume: every key, or only the listed items (a listed key the object lacks is skipped). */
export function projectedFiles(data: Record<string, string>, items: V1KeyToPath[] | undefined): ProjectedFile[] {
  if (!items || items.length === 0) return Object.entries(data).map(([key, content]) => ({ path: key, content }));
  return items.filter((item) => data[item.key] !== undefined).map((item) => ({ path: item.path, content: data[item.key]!, mode: item.mode }));
}

/** The list of paths the last projection wrote, kept beside them like a kubelet's `..data`. */
const manifestName = '..projected';

async function previousPaths(target: string): Promise<string[]> {
  try {
    return (await readFile(join(target, manifestName), 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function currentContent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function replaceFile(path: string, content: string, mode: number, owner?: { uid: number; gid: number }): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `..${randomBytes(6).toString('hex')}.tmp`);
  await writeFile(temporary, content, { mode });
  await chmod(temporary, mode); // writeFile's mode is filtered by the umask
  if (owner) await chown(temporary, owner.uid, owner.gid);
  await rename(temporary, path);
}

/**
 * Writes one object's data into a volume folder. Returns how many files changed (written or
 * removed); an unchanged object costs reads only.
 */
export async function writeProjectedVolume(
  target: string,
  data: Record<string, string>,
  ref: { items?: V1KeyToPath[]; defaultMode?: number },
  owner?: { uid: number; gid: number },
  localize: (content: string) => string = (content) => content,
): Promise<number> {
  await mkdir(target, { recursive: true });
  const files = projectedFiles(data, ref.items).map((file) => ({ ...file, content: localize(file.content) }));
  let changed = 0;
  for (const file of files) {
    const path = join(target, normalize(file.path));
    if (!path.startsWith(`${target}/`)) continue; // the API server refuses such paths; never write outside the volume
    if ((await currentContent(path)) === file.content) continue;
    await replaceFile(path, file.content, file.mode ?? ref.defaultMode ?? 0o644, owner);
    changed += 1;
  }
  const kept = new Set(files.map((f) => normalize(f.path)));
  for (const old of await previousPaths(target)) {
    if (kept.has(old)) continue;
    await rm(join(target, old), { force: true });
    changed += 1;
  }
  await writeFile(join(target, manifestName), [...kept].join('\n'));
  return changed;
}

/** Volumes of the pod that project this object and that some container mounts whole (not by subPath). */
export function volumesProjecting(pod: V1Pod, kind: ProjectedKind, name: string): V1Volume[] {
  const mountedWhole = new Set(
    [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].flatMap((c) =>
      (c.volumeMounts ?? []).filter((m) => !m.subPath && !m.subPathExpr).map((m) => m.name),
    ),
  );
  return (pod.spec?.volumes ?? []).filter((volume) => {
    const source = projectedSource(volume);
    return source?.kind === kind && source.name === name && mountedWhole.has(volume.name);
  });
}
