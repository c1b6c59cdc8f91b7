import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

interface TrimReport {
  grown: number;
  afterTrim: number;
  globalGc: string;
}

/**
 * In a separate process, since the setting is process-wide: ~12 MB of objects become garbage after
 * surviving into the old generation, as an uncached scrape's results do, and the process reports
 * the heap in use before and after the post-scrape hook has had its turn.
 */
function heapAroundTrim(enabled: boolean): TrimReport {
  const script = `
    import v8 from 'node:v8';
    import { keepHeapSmall } from './sidecar/exporter/process/memory.ts';
    import { trimHeapAfterScrape } from './sidecar/exporter/process/heaptrim.ts';
    ${enabled ? 'keepHeapSmall("", []);' : ''}
    const used = () => v8.getHeapStatistics().used_heap_size;
    const start = used();
    let results = [];
    for (let i = 0; i < 1500; i++) results.push(Array.from({ length: 100 }, (_, j) => ({ j, s: 'series ' + j })));
    const grown = used() - start;
    results = undefined;
    trimHeapAfterScrape();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    process.stdout.write(JSON.stringify({ grown, afterTrim: used() - start, globalGc: typeof globalThis.gc }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(out.toString()) as TrimReport;
}

describe('heap trim after a scrape', () => {
  it('runs a full GC once the heap grew past the budget, without putting gc() on the global object', () => {
    const trimmed = heapAroundTrim(true);
    assert.ok(trimmed.grown > 6 * 1024 * 1024, `the script grew the heap by ${trimmed.grown} bytes`);
    assert.ok(trimmed.afterTrim < trimmed.grown / 4, `heap still ${trimmed.afterTrim} bytes above the start after the trim`);
    assert.equal(trimmed.globalGc, 'undefined');
  });

  it('does nothing in a process that did not enable it (in-process exporters, tests)', () => {
    const untouched = heapAroundTrim(false);
    assert.ok(
      untouched.afterTrim > untouched.grown / 2,
      `heap dropped to ${untouched.afterTrim} of ${untouched.grown} bytes without the trim, so the first test would not notice a trim that stopped working`,
    );
  });
});
