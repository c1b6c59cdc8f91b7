/**
 * The CLI that keelson containers run when the stand-in itself runs from the TypeScript sources
 * (`npm run local:up`): the sources compiled once to JavaScript, cached by a hash of their content,
 * because starting each container's Node processes through tsx costs seconds on a small machine
 * (ADR 0358). Transpile only (esbuild, which tsx itself depends on); type checking stays with
 * `npm run typecheck`. When nothing can be compiled, containers fall back to tsx and a warning says so.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type { Logger } from '../../lib/log.js';
import { findRepositoryRoot, keelsonCliArgv } from './images.js';

/** Source folders the programs are made of (tests and benchmarks never run inside a container). */
export const compiledSourceDirs = ['bin', 'api', 'lib', 'operator', 'sidecar', 'ctl', 'admin', 'local'];
/** Holds one folder per source hash, one level below the repository root like dist/. */
export const compiledCacheDir = '.keelson-cli';
const keptBuilds = 3;

/** The subset of esbuild's API used here (esbuild is tsx's dependency, not one of ours). */
export interface Transpiler {
  version: string;
  build(options: Record<string, unknown>): Promise<{ errors: unknown[] }>;
}

function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(child);
    }
  };
  const start = join(root, dir);
  if (existsSync(start)) walk(start);
  return found;
}

/** Every source file to compile, sorted so the hash does not depend on directory order. */
export function listSources(root: string): string[] {
  return compiledSourceDirs.flatMap((dir) => sourceFiles(root, dir)).sort();
}

/** Hash of what the output depends on: each source's path and content, tsconfig, the compiler version. */
export function sourceHash(root: string, files: string[], compilerVersion: string): string {
  const hash = createHash('sha256').update(`esbuild ${compilerVersion}\0`);
  for (const extra of ['tsconfig.json', 'package.json']) {
    const path = join(root, extra);
    if (existsSync(path)) hash.update(`${extra}\0`).update(readFileSync(path)).update('\0');
  }
  for (const file of files)
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** esbuild as tsx resolves it, or undefined when it cannot be loaded here. */
export function loadTranspiler(): Transpiler | undefined {
  try {
    const fromTsx = createRequire(import.meta.resolve('tsx'));
    const esbuild = fromTsx('esbuild') as Partial<Transpiler>;
    return typeof esbuild.build === 'function' && typeof esbuild.version === 'string' ? (esbuild as Transpiler) : undefined;
  } catch {
    return undefined;
  }
}

/** Removes all but the newest few builds (a running stack may still start containers from a recent one). */
function pruneOldBuilds(cache: string, keep: string): void {
  const builds = readdirSync(cache, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== keep && !e.name.startsWith('.'))
    .map((e) => ({ path: join(cache, e.name), mtime: statSync(join(cache, e.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of builds.slice(keptBuilds - 1)) rmSync(old.path, { recursive: true, force: true });
}

export interface CompiledCli {
  /** Path of the compiled bin/keelson.js. */
  entry: string;
  hash: string;
  /** False when this hash was compiled before (by this or another stack). */
  compiled: boolean;
  ms: number;
}

/**
 * Compiles the sources under root to <root>/.keelson-cli/<hash>/ unless that build exists. A build
 * goes to a private folder first and is renamed into place whole, so stacks starting side by side
 * never run a half-written one; the loser of a race drops its copy.
 */
export async function ensureCompiledCli(root: string, transpiler: Transpiler): Promise<CompiledCli> {
  const started = Date.now();
  const files = listSources(root);
  const hash = sourceHash(root, files, transpiler.version);
  const cache = join(root, compiledCacheDir);
  const target = join(cache, hash);
  const entry = join(target, 'bin', 'keelson.js');
  if (existsSync(entry)) return { entry, hash, compiled: false, ms: Date.now() - started };
  mkdirSync(cache, { recursive: true, mode: 0o755 });
  // Unique per call: builds started in the same millisecond by one process must not share a folder.
  const staging = join(cache, `.staging-${hash}-${process.pid}-${randomUUID()}`);
  try {
    const result = await transpiler.build({
      entryPoints: files,
      outdir: staging,
      outbase: root,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: join(root, 'tsconfig.json'),
      sourcemap: true,
      logLevel: 'silent',
    });
    if (result.errors.length > 0) throw new Error(`esbuild reported ${result.errors.length} errors`);
    try {
      renameSync(staging, target);
    } catch (err) {
      // Another stack finished the same build first: use its copy.
      if (!existsSync(entry)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  pruneOldBuilds(cache, hash);
  return { entry, hash, compiled: true, ms: Date.now() - started };
}

/**
 * argv prefix for containers started by a stand-in that runs from the sources: the compiled cache,
 * else (no transpiler, a compile error, a read-only checkout) `fallback` with a warning naming why.
 */
export async function compiledCliArgv(
  root: string,
  fallback: string[],
  logger: Logger,
  load: () => Transpiler | undefined = loadTranspiler,
): Promise<string[]> {
  const transpiler = load();
  if (!transpiler) {
    logger.warn({ fallback: 'tsx' }, 'containers start through tsx (slower): esbuild cannot be loaded to compile the sources');
    return fallback;
  }
  try {
    const built = await ensureCompiledCli(root, transpiler);
    logger.info(
      { dir: join(root, compiledCacheDir, built.hash), compiled: built.compiled, ms: built.ms },
      built.compiled ? 'compiled the sources for containers' : 'containers run the compiled sources',
    );
    return [process.execPath, built.entry];
  } catch (err) {
    logger.warn({ err, fallback: 'tsx' }, 'containers start through tsx (slower): compiling the sources failed');
    return fallback;
  }
}

/**
 * The CLI argv for containers: the built dist/ when this process runs built (keelsonCliArgv), else
 * the compiled cache of the sources, else tsx.
 */
export async function containerCliArgv(logger: Logger, root = findRepositoryRoot()): Promise<string[]> {
  const asRunning = keelsonCliArgv(root);
  if (!asRunning.includes('--import')) return asRunning;
  return compiledCliArgv(root, asRunning, logger);
}
