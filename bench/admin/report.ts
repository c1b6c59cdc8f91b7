import { loadavg } from 'node:os';
import type { Measured, RunSettings } from './measure.js';

/** The target for authenticated, permission-checked reads. */
export const target = { ratio: 0.4, p99Ms: 25 };

const fixed = (value: number, width: number, digits = 0): string => value.toFixed(digits).padStart(width);

function verdict(r: Measured, ratio: number): string {
  if (!r.targeted) return '';
  const failed = [ratio < target.ratio ? 'ratio' : '', r.latency.p99 > target.p99Ms ? 'p99' : ''].filter(Boolean);
  return failed.length ? `FAIL (${failed.join(', ')})` : 'PASS';
}

/** Prints one table: requests/s, latency, ratio to the neighbouring bare run, CPU per request, verdict. */
export function report(results: Measured[], settings: RunSettings, startLoad: number[]): void {
  console.log(`\nadmin benchmark: ${settings.connections} connections, ${settings.seconds} s each, Node ${process.version}`);
  console.log(
    `load average at start: ${startLoad.map((l) => l.toFixed(2)).join(' ')}; now: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`target for authenticated reads: ≥ ${target.ratio * 100}% of bare req/s and p99 ≤ ${target.p99Ms} ms`);
  console.log('each ratio is to the bare handler measured right before that scenario (the bare row shows the mean)\n');
  console.log(
    [
      'scenario'.padEnd(60),
      'req/s'.padStart(7),
      'p50 ms'.padStart(7),
      'p99 ms'.padStart(7),
      'vs bare'.padStart(8),
      'errors'.padStart(7),
      'CPU µs/req node+pg+redis'.padStart(26),
      ' target',
    ].join(' '),
  );
  for (const r of results) {
    const errors = r.non2xx + r.errors + r.timeouts;
    const c = r.cpuPerRequest;
    const cpu = c ? `${fixed(c.admin + c.postgres + c.redis, 5)} = ${fixed(c.admin, 4)}+${fixed(c.postgres, 3)}+${fixed(c.redis, 3)}` : 'n/a';
    const ratio = r.requests.average / (r.base ?? r.requests.average);
    console.log(
      [
        r.name.padEnd(60),
        fixed(r.requests.average, 7),
        fixed(r.latency.p50, 7),
        fixed(r.latency.p99, 7),
        `${(ratio * 100).toFixed(0)}%`.padStart(8),
        String(errors).padStart(7),
        cpu.padStart(26),
        verdict(r, ratio),
      ].join(' '),
    );
  }
}
