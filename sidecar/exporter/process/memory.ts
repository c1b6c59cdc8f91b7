import v8 from 'node:v8';
import { enableHeapTrim } from './heaptrim.js';

/** How much V8 lets the old generation grow past what the last full GC kept, in percent. */
export const heapGrowingPercent = 30;

/**
 * Keeps the exporter process's V8 heap close to what it really uses. Both flags are read by V8
 * each time it sizes the heap, so setting them at run time takes effect (unlike
 * --max-semi-space-size or --max-old-space-size, which are only read at start).
 *
 * - The young generation keeps its initial size (two 1 MB semi-spaces on 64-bit). A scrape's
 *   garbage is short-lived and small, so a large young generation buys nothing but resident
 *   memory. Left alone, V8 grows it to 16 MB semi-spaces (32–48 MB of RSS) in the first few
 *   thousand scrapes, which is the growth the benchmark saw.
 * - The old generation may grow 30% past the live heap before the next full GC. The default
 *   factor, up to 4x for a heap this small, lets promoted scrape garbage pile up to ~2x the
 *   live heap (~15 MB) before the first mark-compact, so RSS climbs for thousands of scrapes.
 *   A full GC of a 15 MB heap takes a few milliseconds, once every thousand-odd scrapes.
 *
 * - TurboFan and Maglev, V8's optimising compilers, are off (`--no-opt --no-maglev`; the
 *   interpreter and the baseline compiler remain). Its optimised code and compilation zones are 6–8 MB of resident memory,
 *   and a scrape waits on PostgreSQL, not on JavaScript: the benchmark shows the same scrape
 *   times, cached and uncached, with and without it.
 *
 * - Full GCs are also run by the exporter itself after a scrape once the heap has grown 1.5 MB
 *   past what the last one kept (`heaptrim.ts`): V8's own limit lies at least 8 MB further, and
 *   scrapes without the cache fill it with promoted results.
 *
 * An operator who sets any of these through NODE_OPTIONS or node's arguments has chosen, and
 * none of the flags is touched.
 */
export function keepHeapSmall(nodeOptions = process.env.NODE_OPTIONS ?? '', execArgv = process.execArgv): boolean {
  const chosen = [nodeOptions, ...execArgv].some((arg) => /semi[-_]space|old[-_]space|heap[-_]growing|--(no[-_])?(opt|maglev|turbofan)\b|max[-_]opt/.test(arg));
  if (chosen) return false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  v8.setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  v8.setFlagsFromString('--no-opt');
  // Newer V8 (Node 22+) also optimises hot code with Maglev, a second optimising tier.
  v8.setFlagsFromString('--no-maglev');
  enableHeapTrim();
  return true;
}
