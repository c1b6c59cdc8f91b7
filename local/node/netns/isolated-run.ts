/**
 * Starts a command in a fresh network namespace (`unshare --net`), which has nothing but a down
 * lo: no link to the host, no route out. The whole stack of namespace mode runs in one such
 * namespace; it disappears with the last process in it. Only root can do this.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readlinkSync } from 'node:fs';

/** Set in the environment of a command started by spawnIsolated. */
export const isolatedVariable = 'KEELSON_ISOLATED_NETNS';
/** The starting process's namespace (`net:[inode]`) and pid: the isolation check compares against it. */
export const hostNamespaceVariable = 'KEELSON_HOST_NETNS';
export const hostPidVariable = 'KEELSON_HOST_NETNS_PID';

export function spawnIsolated(argv: string[], options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions; cwd?: string } = {}): ChildProcess {
  if (process.getuid?.() !== 0) throw new Error('an isolated network namespace needs root (unshare --net)');
  return spawn('unshare', ['--net', '--', ...argv], {
    cwd: options.cwd,
    env: {
      ...(options.env ?? process.env),
      [isolatedVariable]: '1',
      [hostNamespaceVariable]: readlinkSync('/proc/self/ns/net'),
      [hostPidVariable]: String(process.pid),
    },
    stdio: options.stdio ?? 'inherit',
  });
}

/** Runs argv isolated and resolves with its exit code. */
export function runIsolated(argv: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<number> {
  const child = spawnIsolated(argv, options);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

export function insideIsolatedRun(): boolean {
  return process.env[isolatedVariable] === '1';
}
