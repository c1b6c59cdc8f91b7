import { fs } from '../../../lib/builtins.js';
import type { ByteWriter } from '../text/bytewriter.js';
import { familyHead, formatValue, renderLabels, type FamilyType } from '../text/exposition.js';

const startTimeSeconds = Math.round(Date.now() / 1000 - process.uptime());

function openFds(): number | undefined {
  try {
    return fs.readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

const families: Array<readonly [string, FamilyType, string]> = [
  ['process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.'],
  ['process_cpu_system_seconds_total', 'counter', 'Total system CPU time spent in seconds.'],
  ['process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.'],
  ['process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.'],
  ['process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.'],
  ['nodejs_heap_size_total_bytes', 'gauge', 'Process heap size from Node.js in bytes.'],
  ['nodejs_heap_size_used_bytes', 'gauge', 'Process heap size used from Node.js in bytes.'],
  ['nodejs_external_memory_bytes', 'gauge', 'Node.js external memory size in bytes.'],
  ['process_open_fds', 'gauge', 'Number of open file descriptors.'],
];

/**
 * Process metrics under the names prom-client's defaults use (process_*, nodejs_*), computed
 * directly: prom-client's full default set costs about a millisecond per scrape, which is a third
 * of the cached-scrape budget, for series nobody alerts on.
 */
export class ProcessMetrics {
  private readonly heads: Buffer[];
  private readonly prefixes: Buffer[];

  constructor(constantLabels: ReadonlyArray<readonly [string, string]>) {
    const labels = renderLabels(constantLabels);
    this.heads = families.map(([name, type, help]) => Buffer.from(familyHead(name, type, help)));
    this.prefixes = families.map(([name]) => Buffer.from(`${name}${labels} `));
  }

  familyNames(): string[] {
    return families.map(([name]) => name);
  }

  write(w: ByteWriter): void {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const values = [
      cpu.user / 1e6,
      cpu.system / 1e6,
      (cpu.user + cpu.system) / 1e6,
      startTimeSeconds,
      memory.rss,
      memory.heapTotal,
      memory.heapUsed,
      memory.external,
      openFds(),
    ];
    for (let i = 0; i < families.length; i++) {
      const value = values[i];
      if (value === undefined) continue;
      w.bytes(this.heads[i]);
      w.sample(this.prefixes[i], formatValue(value));
    }
  }
}
