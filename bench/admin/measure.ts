import { createRequire } from 'node:module';
import { cpuBetween, cpuSnapshot, type CpuSample, type ServerPids } from './cpu.js';

export interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface Measured extends AutocannonResult {
  name: string;
  /** CPU microseconds per request: admin process, PostgreSQL, Redis. */
  cpuPerRequest?: CpuSample;
  /** Whether the read target applies to this scenario. */
  targeted: boolean;
  /** Requests/s of the bare handler measured right before this scenario (the ratio's base). */
  base?: number;
}

export interface RunSettings {
  seconds: number;
  connections: number;
}

/** Checks one response, warms up for a second, then measures requests/s, latency and CPU per request. */
export async function measure(
  name: string,
  pids: ServerPids,
  settings: RunSettings,
  options: Record<string, unknown>,
  targeted: boolean,
  check: (body: string) => boolean,
): Promise<Measured> {
  const probe = await fetch(options.url as string, {
    method: (options.method as string) ?? 'GET',
    headers: options.headers as Record<string, string>,
    body: options.body as string | undefined,
  });
  const text = await probe.text();
  if (!check(text)) throw new Error(`${name}: unexpected response ${text.slice(0, 200)}`);
  await autocannon({ connections: settings.connections, duration: 1, ...options }); // warm-up: JIT, pools, caches
  const before = cpuSnapshot(pids);
  const result = await autocannon({ connections: settings.connections, duration: settings.seconds, ...options });
  const after = cpuSnapshot(pids);
  const used = before && after ? cpuBetween(before, after) : undefined;
  const perRequest = (cpuSeconds: number): number => (cpuSeconds * 1e6) / Math.max(1, result.requests.total);
  const cpuPerRequest = used && { admin: perRequest(used.admin), postgres: perRequest(used.postgres), redis: perRequest(used.redis) };
  return { name, ...result, cpuPerRequest, targeted };
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** One row for several runs of the same scenario: mean rate, latency and CPU, summed errors. */
export function meanOf(runs: Measured[]): Measured {
  const cpu = runs.every((r) => r.cpuPerRequest) ? runs.map((r) => r.cpuPerRequest as CpuSample) : undefined;
  return {
    ...runs[0],
    name: runs.length > 1 ? `${runs[0].name} (mean of ${runs.length})` : runs[0].name,
    requests: { average: mean(runs.map((r) => r.requests.average)), total: runs.reduce((a, r) => a + r.requests.total, 0) },
    latency: { p50: mean(runs.map((r) => r.latency.p50)), p99: mean(runs.map((r) => r.latency.p99)) },
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    timeouts: runs.reduce((a, r) => a + r.timeouts, 0),
    cpuPerRequest: cpu && { admin: mean(cpu.map((c) => c.admin)), postgres: mean(cpu.map((c) => c.postgres)), redis: mean(cpu.map((c) => c.redis)) },
  };
}
