import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** The processes whose CPU time a scenario is charged with. */
export interface ServerPids {
  admin: number;
  postgres: number;
  redis: number;
}

/** CPU seconds (or µs per request) of the admin process, the PostgreSQL server (all its processes) and Redis. */
export type CpuSample = { admin: number; postgres: number; redis: number };

export type CpuSnapshot = Map<number, { cpu: number; role: keyof CpuSample }>;

const clockTicks = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime and parent pid of one process, or undefined when it is gone (or not Linux). */
function procStat(pid: number): { cpu: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / clockTicks };
  } catch {
    return undefined;
  }
}

/** CPU seconds per process: the admin process, Redis and every PostgreSQL process (server and backends). */
export function cpuSnapshot(pids: ServerPids): CpuSnapshot | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const sample: CpuSnapshot = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = procStat(pid);
    if (!stat) continue;
    if (pid === pids.admin) sample.set(pid, { cpu: stat.cpu, role: 'admin' });
    else if (pid === pids.redis) sample.set(pid, { cpu: stat.cpu, role: 'redis' });
    else if (pid === pids.postgres || stat.ppid === pids.postgres) sample.set(pid, { cpu: stat.cpu, role: 'postgres' });
  }
  return sample;
}

/** CPU used between two snapshots by role; a process that ended in between is left out, not subtracted. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuSample {
  const used: CpuSample = { admin: 0, postgres: 0, redis: 0 };
  for (const [pid, { cpu, role }] of after) used[role] += cpu - (before.get(pid)?.cpu ?? 0);
  return used;
}
