/**
 * Claims with a real capacity (ADR 0308). As root, every PersistentVolumeClaim a pod of this node
 * mounts is a tmpfs of the claimed size at the claim's folder: a write past it fails with ENOSPC
 * as on a full disk, `df` shows the claimed size, and growth is a remount with a larger size,
 * online, whatever the volume holds (full or not). Without root (or when the kernel refuses the
 * mount) claims stay plain folders without a size, as before.
 *
 * A tmpfs keeps nothing once unmounted, so closing the node copies each volume's files to a store
 * folder first and the next mount of that claim copies them back: data survives a node restart,
 * as a PersistentVolume's does.
 */
import { execFile } from 'node:child_process';
import { readFileSync, statfsSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../lib/log.js';
import { claimDirectory } from './volumes.js';

const run = promisify(execFile);

export type VolumeMode = 'filesystem' | 'directory';

/** The source name every claim mount carries: what a leak check looks for in /proc/self/mountinfo. */
export const claimMountSource = 'keelson-claim';

/** Mount points (unescaped) of this process's mount table, with their source. */
export function mountTable(text = readFileSync('/proc/self/mountinfo', 'utf8')): Array<{ mountPoint: string; source: string }> {
  const unescape = (field: string): string => field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const fields = line.split(' ');
      const separator = fields.indexOf('-');
      return { mountPoint: unescape(fields[4] ?? ''), source: unescape(fields[separator + 2] ?? '') };
    });
}

/** Claim mounts under a node directory (none after a clean close). */
export function claimMountsUnder(nodeDir: string): string[] {
  const prefix = `${join(nodeDir, 'volumes')}/`;
  return mountTable()
    .filter((m) => m.source === claimMountSource && m.mountPoint.startsWith(prefix))
    .map((m) => m.mountPoint);
}

/** Where a claim volume's files wait while it is not mounted. */
function storeDirectory(nodeDir: string, namespace: string, claim: string): string {
  return join(nodeDir, 'volume-store', namespace, claim);
}

async function copyContents(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  // cp -a keeps owners and modes (PostgreSQL refuses a data directory that is not 0700).
  await run('cp', ['-a', `${from}/.`, `${to}/`]);
}

export class ClaimFilesystems {
  private constructor(
    readonly mode: VolumeMode,
    private readonly nodeDir: string,
    private readonly logger: Logger,
  ) {}

  /** Filesystem mode when this process is root and may mount a tmpfs; directories otherwise. */
  static async open(nodeDir: string, logger: Logger): Promise<ClaimFilesystems> {
    if (process.getuid?.() !== 0) return new ClaimFilesystems('directory', nodeDir, logger);
    const probe = join(nodeDir, '.mount-probe');
    // A previous run of this node killed before its shutdown (SIGKILL) left its volumes mounted:
    // their RAM stays taken until someone unmounts them. Their files go to the store, as at a clean close.
    const stale = await saveAndUnmountClaims(nodeDir, logger);
    if (stale > 0) logger.info({ volumes: stale }, 'unmounted claim volumes left mounted by a previous run');
    try {
      await mkdir(probe, { recursive: true });
      await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', claimMountSource, probe]);
      await run('umount', [probe]);
      return new ClaimFilesystems('filesystem', nodeDir, logger);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'cannot mount a tmpfs: claims are folders without a size');
      return new ClaimFilesystems('directory', nodeDir, logger);
    } finally {
      await rm(probe, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private storeDirectory(namespace: string, claim: string): string {
    return storeDirectory(this.nodeDir, namespace, claim);
  }

  isMounted(namespace: string, claim: string): boolean {
    return claimMountsUnder(this.nodeDir).includes(claimDirectory(this.nodeDir, namespace, claim));
  }

  /**
   * Makes the claim's folder its volume: in filesystem mode a tmpfs of `bytes` (kept when already
   * mounted). Returns the capacity in bytes, or undefined for a folder without a size.
   */
  async ensure(namespace: string, claim: string, bytes: number): Promise<number | undefined> {
    const target = claimDirectory(this.nodeDir, namespace, claim);
    await mkdir(target, { recursive: true });
    if (this.mode === 'directory') return undefined;
    const current = this.capacity(namespace, claim);
    if (current !== undefined) return current;
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, claimMountSource, target]);
    const store = this.storeDirectory(namespace, claim);
    if (
      await stat(store).then(
        () => true,
        () => false,
      )
    ) {
      await copyContents(store, target);
      await rm(store, { recursive: true, force: true });
    }
    this.logger.info({ claim: `${namespace}/${claim}`, bytes }, 'claim volume mounted');
    return bytes;
  }

  /** Size of a mounted claim volume in bytes (statfs), undefined when it is not mounted. */
  capacity(namespace: string, claim: string): number | undefined {
    if (!this.isMounted(namespace, claim)) return undefined;
    const stats = statfsSync(claimDirectory(this.nodeDir, namespace, claim));
    return stats.blocks * stats.bsize;
  }

  /** Grows a mounted claim volume online; false when it is not mounted (grown at its next mount). */
  async grow(namespace: string, claim: string, bytes: number): Promise<boolean> {
    if (this.mode === 'directory' || !this.isMounted(namespace, claim)) return false;
    await run('mount', ['-o', `remount,size=${bytes}`, claimDirectory(this.nodeDir, namespace, claim)]);
    this.logger.info({ claim: `${namespace}/${claim}`, bytes }, 'claim volume grown');
    return true;
  }

  /** A deleted claim: its volume goes, contents and all. */
  async release(namespace: string, claim: string): Promise<void> {
    const target = claimDirectory(this.nodeDir, namespace, claim);
    if (this.isMounted(namespace, claim)) await unmount(target);
    await rm(target, { recursive: true, force: true });
    await rm(this.storeDirectory(namespace, claim), { recursive: true, force: true });
  }

  /** Claims mounted now, as namespace/name. */
  mountedClaims(): Array<{ namespace: string; claim: string }> {
    const prefix = `${join(this.nodeDir, 'volumes')}/`;
    return claimMountsUnder(this.nodeDir).map((path) => {
      const [namespace = '', claim = ''] = path.slice(prefix.length).split('/');
      return { namespace, claim };
    });
  }

  /** Saves every mounted volume's files to the store and unmounts it (node shutdown). */
  async close(): Promise<void> {
    await saveAndUnmountClaims(this.nodeDir, this.logger);
  }
}

/**
 * Saves each claim volume under a node directory to its store folder, then unmounts it: the
 * node's shutdown, its next start after it was killed, and `local down` after a node that had to
 * be killed or had died. Only mounts that are this node's are touched: the claim source name
 * under this node's own folder (the mount probe's included). Returns how many claim volumes it
 * unmounted.
 */
export async function saveAndUnmountClaims(nodeDir: string, logger: Logger): Promise<number> {
  const prefix = `${join(nodeDir, 'volumes')}/`;
  const probe = join(nodeDir, '.mount-probe');
  if (mountTable().some((m) => m.source === claimMountSource && m.mountPoint === probe)) await unmount(probe).catch(() => undefined);
  const targets = claimMountsUnder(nodeDir);
  for (const target of targets) {
    const [namespace = '', claim = ''] = target.slice(prefix.length).split('/');
    try {
      await copyContents(target, storeDirectory(nodeDir, namespace, claim));
    } catch (err) {
      logger.warn({ claim: `${namespace}/${claim}`, err: (err as Error).message }, 'could not save a claim volume before unmounting it');
    }
    await unmount(target).catch((err: unknown) => logger.warn({ claim: `${namespace}/${claim}`, err: (err as Error).message }, 'claim volume unmount failed'));
  }
  return targets.length;
}

/** Unmounts; a volume some leftover process still holds is detached lazily (gone from the table at once). */
async function unmount(target: string): Promise<void> {
  try {
    await run('umount', [target]);
  } catch {
    await run('umount', ['-l', target]);
  }
}
