import { spawn } from 'node:child_process';

/** A program run to its end by a test: what it printed and how it ended, failure included. */

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Sends SIGTERM once this long has passed, as execFile's `timeout` does. */
  timeoutMs?: number;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
}

export interface RunResult {
  /** The exit code; null when a signal ended the program. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `file` until it has exited and closed its output; rejects only when it cannot be started. */
export function runProcess(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  });
}

/** `keelson <args>` from the source tree (node --import tsx bin/keelson.ts), run to its end. */
export function runKeelson(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return runProcess(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', ...args], options);
}
