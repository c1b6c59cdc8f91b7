/**
 * A CPU burner for benchmarks that must hold their figures on a loaded machine: N child processes
 * that spin, and a sampler of the 1-minute load average while they run. On 2 cores, 10–12
 * burners hold the 1-minute load at 10 or more after the first minute.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Burner {
  /** 1-minute load averages sampled every 5 s since the start. */
  loads(): number[];
  stop(): void;
}

export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

export function startBurner(processes: number): Burner {
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i += 1) {
    children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(loadAverage()), 5_000);
  timer.unref();
  return {
    loads: () => [...samples],
    stop() {
      clearInterval(timer);
      for (const child of children) child.kill('SIGKILL');
    },
  };
}

/** Waits until the 1-minute load reaches `target` (at most `timeoutMs`), so the faults start on a loaded machine. */
export async function waitForLoad(target: number, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (loadAverage() < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2_000));
  return loadAverage();
}
