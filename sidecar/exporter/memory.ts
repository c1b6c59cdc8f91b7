import v8 from 'node:v8';

/**
 * Stops V8 from growing the young generation beyond its initial size (two 1 MB semi-spaces on
 * 64-bit) in the exporter process. A scrape's garbage is short-lived and small, so a large young
 * generation buys nothing but resident memory: left alone V8 grows it to 16 MB semi-spaces
 * (32–48 MB of RSS) in the first few thousand scrapes, which is the growth the benchmark saw.
 * The growth factor is read each time V8 considers growing, so setting it at run time takes
 * effect, unlike --max-semi-space-size, which only NODE_OPTIONS could set. An operator can still
 * choose otherwise with NODE_OPTIONS=--semi-space-growth-factor=N (that setting is then kept).
 */
export function keepYoungGenerationSmall(nodeOptions = process.env.NODE_OPTIONS ?? '', execArgv = process.execArgv): boolean {
  const chosen = [nodeOptions, ...execArgv].some((arg) => /semi[-_]space/.test(arg));
  if (chosen) return false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
