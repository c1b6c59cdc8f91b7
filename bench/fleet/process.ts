/** CPU time and resident memory of a process, from /proc (Linux). */
import { readFileSync } from 'node:fs';

const ticksPerSecond = 100; // USER_HZ on Linux

export function processUsage(pid: number): { cpuMs: number; rssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000;
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuMs, rssBytes: rssKiB * 1024 };
}
