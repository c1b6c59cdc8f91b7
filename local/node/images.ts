/**
 * Container image → local command mapping. There is no container runtime here, so every image a
 * pod names must map to something this machine can execute. The rules, in order:
 *
 * 1. An image whose repository matches a configured mapping (exact repository, or a suffix after a
 *    `/`) uses that mapping's `entrypoint` as the image ENTRYPOINT. `aliases` maps executable names
 *    that manifests put in `command` (e.g. `keelson`) to local argv prefixes.
 * 2. Built in: any repository ending in `keelson` (`ghcr.io/keelson/keelson:0.1.0`) has ENTRYPOINT
 *    `keelson`, which runs this repository's CLI (dist when built; from the sources, their compiled
 *    cache, see compiled-cli.ts, else `node --import tsx`).
 * 3. Docker semantics otherwise: `command` replaces the ENTRYPOINT and `args` replace CMD, so a
 *    container with an explicit `command` of a local executable (`/bin/sh`) runs as is.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ImageMapping {
  /** Repository to match: exact (`registry.test/web`) or a path suffix (`keelson` matches `ghcr.io/keelson/keelson`). */
  repository: string;
  /** Local argv used as the image ENTRYPOINT. */
  entrypoint: string[];
  /** Default arguments (the image CMD) used when the container has neither command nor args. */
  cmd?: string[];
  /** Executable names in `command[0]` that map to local argv prefixes. */
  aliases?: Record<string, string[]>;
}

export interface ImageReference {
  repository: string;
  tag?: string;
  digest?: string;
}

export interface ContainerCommandInput {
  image?: string;
  command?: string[];
  args?: string[];
}

/**
 * `hostArgs` counts the leading argv entries that come from the node's image mapping (host paths
 * such as this repository's CLI): they are used as they are, never rewritten like manifest values.
 */
export type ResolvedCommand = { ok: true; argv: string[]; hostArgs: number } | { ok: false; reason: string; message: string };

/**
 * The argv a container runs: manifest values go through `localize` (mount paths, loopback), the
 * mapping's host entries do not (the repository may itself live under a path a pod mounts, e.g. /tmp).
 */
export function localizeArgv(resolved: { argv: string[]; hostArgs: number }, localize: (arg: string) => string): string[] {
  return resolved.argv.map((arg, i) => (i < resolved.hostArgs ? arg : localize(arg)));
}

/** Splits `host:port/path/name:tag@sha256:…` into repository, tag and digest. */
export function parseImageReference(image: string): ImageReference {
  let rest = image.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > lastSlash) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
  }
  return { repository: rest, tag, digest };
}

export function repositoryMatches(repository: string, pattern: string): boolean {
  return repository === pattern || repository.endsWith(`/${pattern}`);
}

/** Finds the repository root (the folder holding package.json) above this module, for src and dist layouts. */
export function findRepositoryRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no repository root above ${start}`);
    dir = parent;
  }
}

/**
 * argv that runs this repository's `keelson` CLI the way this process runs: the built dist when this
 * module is itself built, else the TypeScript source through tsx. Containers run the same code as
 * the command that started them, so a dist/ left from an older build never shadows the sources.
 */
export function keelsonCliArgv(root = findRepositoryRoot(), runningBuilt = fileURLToPath(import.meta.url).endsWith('.js')): string[] {
  const built = join(root, 'dist', 'bin', 'keelson.js');
  if (runningBuilt && existsSync(built)) return [process.execPath, built];
  // --import is resolved against the child's cwd, so pass tsx's loader as an absolute URL.
  const tsxLoader = import.meta.resolve('tsx');
  return [process.execPath, '--import', tsxLoader, join(root, 'bin', 'keelson.ts')];
}

/** `cli` is the argv prefix that runs the CLI (default: as this process runs; see compiled-cli.ts). */
export function builtinImageMappings(root?: string, cli = keelsonCliArgv(root)): ImageMapping[] {
  return [{ repository: 'keelson', entrypoint: cli, aliases: { keelson: cli } }];
}

/** Resolves the local argv for one container; configured mappings win over built-in ones. */
export function resolveContainerCommand(container: ContainerCommandInput, mappings: ImageMapping[]): ResolvedCommand {
  const image = container.image ?? '';
  const { repository } = parseImageReference(image);
  const mapping = mappings.find((m) => repositoryMatches(repository, m.repository));
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (command.length > 0) {
    const alias = mapping?.aliases?.[command[0]];
    return alias
      ? { ok: true, argv: [...alias, ...command.slice(1), ...args], hostArgs: alias.length }
      : { ok: true, argv: [...command, ...args], hostArgs: 0 };
  }
  if (!mapping) {
    return {
      ok: false,
      reason: 'ErrImagePull',
      message: `no local command is mapped for image "${image}" and the container sets no command (see docs/local-node-agent.md)`,
    };
  }
  const cmd = container.args !== undefined ? args : (mapping.cmd ?? []);
  return { ok: true, argv: [...mapping.entrypoint, ...cmd], hostArgs: mapping.entrypoint.length };
}
