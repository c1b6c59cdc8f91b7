import { execFile, spawn } from 'node:child_process';
import { chownSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ToolActivity } from './tool-activity.js';

const execFileAsync = promisify(execFile);

/** The system account PostgreSQL runs as: PostgreSQL refuses root, so a root ha-node drops to it. */
export interface RunAs {
  user: string;
  uid: number;
  gid: number;
}

/** Resolves the run-as account: none when not root (run as ourselves), else the named user (default postgres). */
export async function resolveRunAs(user: string | undefined): Promise<RunAs | undefined> {
  const isRoot = process.getuid?.() === 0;
  if (!isRoot && !user) return undefined;
  const name = user ?? 'postgres';
  if (!isRoot) return undefined;
  try {
    const { stdout: uid } = await execFileAsync('id', ['-u', name]);
    const { stdout: gid } = await execFileAsync('id', ['-g', name]);
    return { user: name, uid: Number(uid.trim()), gid: Number(gid.trim()) };
  } catch {
    throw new Error(`cannot run PostgreSQL as "${name}": no such system user`);
  }
}

export interface RunResult {
  code: number | null;
  output: string;
}

export interface ToolOptions {
  runAs?: RunAs;
  env?: NodeJS.ProcessEnv;
  stdin?: string;
  timeoutMs?: number;
  /** Told when a tool with a timeout starts and ends (liveness: a long step in progress is alive). */
  activity?: Pick<ToolActivity, 'started' | 'finished'>;
}

/** Runs a PostgreSQL tool as the run-as account and collects its output; never throws on exit codes. */
export function runTool(file: string, args: string[], options: ToolOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      uid: options.runAs?.uid,
      gid: options.runAs?.gid,
      env: { ...process.env, ...options.env, ...(options.runAs ? { HOME: '/tmp', USER: options.runAs.user } : {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: '/tmp',
    });
    let output = '';
    const pid = child.pid;
    // Only a bounded run counts as progress: a tool without a timeout could hang liveness green.
    const activity = options.timeoutMs ? options.activity : undefined;
    activity?.started(pid);
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      activity?.finished(pid);
      reject(error);
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      activity?.finished(pid);
      resolve({ code, output: output.trim() });
    });
    // The tool may exit before reading its input; a closed pipe is not an error here.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

export async function runToolOrThrow(file: string, args: string[], options: ToolOptions = {}): Promise<string> {
  const result = await runTool(file, args, options);
  if (result.code !== 0) throw new Error(`${file.split('/').pop()} ${args[0] ?? ''} failed (exit ${result.code}): ${result.output.slice(-600)}`);
  return result.output;
}

/**
 * Writes a file only the run-as account can read (it may hold passwords). The content goes to a
 * temporary file beside it that is renamed over the old one, so PostgreSQL reloading (or a reader,
 * or a crash) never meets a truncated postgresql.conf.
 */
export function writePrivateFile(path: string, content: string, runAs?: RunAs): void {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, content, { mode: 0o600 });
    if (runAs) chownSync(temporary, runAs.uid, runAs.gid);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
