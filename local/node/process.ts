/**
 * One container run as a local process. The process leads its own process group; stdout and
 * stderr are appended to a log file. Processes carry a marker variable so that everything they
 * spawn (even daemons that start a new session, like pg_ctl's postmaster) can be found in /proc and
 * killed, with their descendants, when the container stops, which is what tearing down a
 * container's cgroup does.
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
        killContainerProcesses(spec.marker, 'SIGKILL');
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
    killContainerProcesses(this.spec.marker, 'SIGKILL');
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

/** One /proc entry as teardown needs it. */
interface ProcEntry {
  pid: number;
  ppid: number;
  marked: boolean;
}

function readProcessTable(needle: string, prefix: boolean): ProcEntry[] {
  const table: ProcEntry[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let stat: string;
    let environ: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const marked = environ.split('\0').some((item) => (prefix ? item.startsWith(needle) : item === needle));
    table.push({ pid: Number(entry), ppid, marked });
  }
  return table;
}

/**
 * pids of a container: every process whose environment holds `KEELSON_LOCAL_CONTAINER=<marker>`
 * (or starts with the prefix), and all their descendants. Descendants count because a daemon's
 * children may drop the marker: PostgreSQL backends call setsid() and overwrite their environment
 * area with the process title, so only their parent, the postmaster, still shows it.
 */
export function findContainerProcesses(marker: string, prefix = false): number[] {
  const table = readProcessTable(`${markerVariable}=${marker}`, prefix);
  const children = new Map<number, number[]>();
  for (const entry of table) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  const found = new Set<number>();
  const pending = table.filter((entry) => entry.marked).map((entry) => entry.pid);
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return [...found];
}

function signalAll(pids: number[], signal: NodeJS.Signals): number {
  let signalled = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
      signalled += 1;
    } catch {
      // raced with its exit
    }
  }
  return signalled;
}

/**
 * Kills a container's processes as a cgroup teardown would: all of them, none left to run on.
 * SIGKILL first freezes them with SIGSTOP, then looks again: a parent that forked (a postmaster
 * accepting a connection) between the scan and the kill cannot leave a child behind, and a child
 * killed after its parent is still found (a stopped parent does not reap it, so the tree holds).
 */
export function killContainerProcesses(marker: string, signal: NodeJS.Signals, prefix = false): number {
  if (signal !== 'SIGKILL') return signalAll(findContainerProcesses(marker, prefix), signal);
  const frozen = findContainerProcesses(marker, prefix);
  signalAll(frozen, 'SIGSTOP');
  const all = new Set([...frozen, ...findContainerProcesses(marker, prefix)]);
  return signalAll([...all], 'SIGKILL');
}
