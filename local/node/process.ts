/**
 * One container run as a local process. The process leads its own process group; stdout and
 * stderr are appended to a log file. Processes carry a marker variable so that everything they
 * spawn (even daemons that start a new session, like pg_ctl's postmaster) can be found in /proc and
 * killed when the container stops, which is what tearing down a container's cgroup does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync } from 'node:fs';

export const markerVariable = 'KEELSON_LOCAL_CONTAINER';

export interface ProcessSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
  /** Marker value unique to this container instance. */
  marker: string;
  uid?: number;
  gid?: number;
}

export interface ExitInfo {
  exitCode: number;
  signal: NodeJS.Signals | null;
  finishedAt: Date;
  /** Set when the process never started (e.g. executable missing). */
  startError?: string;
}

export class ContainerProcess {
  readonly startedAt = new Date();
  readonly exited: Promise<ExitInfo>;
  private readonly child: ChildProcess;
  private done = false;

  constructor(readonly spec: ProcessSpec) {
    const fd = openSync(spec.logFile, 'a');
    try {
      this.child = spawn(spec.argv[0], spec.argv.slice(1), {
        cwd: spec.cwd,
        env: { ...spec.env, [markerVariable]: spec.marker },
        uid: spec.uid,
        gid: spec.gid,
        detached: true,
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise<ExitInfo>((resolve) => {
      this.child.once('error', (err) => {
        if (this.done) return;
        this.done = true;
        resolve({ exitCode: 128, signal: null, finishedAt: new Date(), startError: err.message });
      });
      this.child.once('exit', (code, signal) => {
        if (this.done) return;
        this.done = true;
        // Like the container runtime: the whole container goes when its main process exits.
        killMarkedProcesses(spec.marker, 'SIGKILL');
        resolve({ exitCode: code ?? 128 + signalNumber(signal), signal, finishedAt: new Date() });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** SIGTERM to the main process, SIGKILL to everything of the container after graceMs. */
  async stop(graceMs: number): Promise<ExitInfo> {
    if (this.done) return this.exited;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.kill(), Math.max(graceMs, 0));
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // group already gone
      }
    }
    killMarkedProcesses(this.spec.marker, 'SIGKILL');
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      this.child.kill(signal);
    } catch {
      // already exited
    }
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15 };
  return signal ? (numbers[signal] ?? 1) : 0;
}

/** pids whose environment holds `KEELSON_LOCAL_CONTAINER=<marker>` (or starts with markerPrefix). */
export function findMarkedProcesses(marker: string, prefix = false): number[] {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  const needle = `${markerVariable}=${marker}`;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    const hit = environ.split('\0').some((item) => (prefix ? item.startsWith(needle) : item === needle));
    if (hit) found.push(Number(entry));
  }
  return found;
}

export function killMarkedProcesses(marker: string, signal: NodeJS.Signals, prefix = false): number {
  let killed = 0;
  for (const pid of findMarkedProcesses(marker, prefix)) {
    try {
      process.kill(pid, signal);
      killed += 1;
    } catch {
      // raced with its exit
    }
  }
  return killed;
}
