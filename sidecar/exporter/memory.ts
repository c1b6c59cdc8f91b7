import v8 from 'node:v8';

/**
 * Stops V8 from growing the young generation beyond its initial size (two 1 MB semi-spaces on
 * 64-bit) in the exporter process. A scrape's garbage is short-lived and small, so a large young
 * generation buys nothing but resident memory: left alone V8 grows it to 16 MB semi-spaces
 * (32–48 MB of RSS) in the first few thousand scrapes, which is the growth the benchmark saw.
 * The growth factor is read each time V8 considers growing, so setting it at run time takes
 * effect; --max-semi-space-size is only read at start (NODE_OPTIONS). An operator who sets a
 * semi-space size that way has chosen, and is left alone.
 */
export function keepYoungGenerationSmall(nodeOptions = process.env.NODE_OPTIONS ?? '', execArgv = process.execArgv): boolean {
  const chosen = [nodeOptions, ...execArgv].some((arg) => /semi[-_]space/.test(arg));
  if (chosen) return false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
