import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFiles } from './crd-files.js';

/** Regenerates crds/ (npm run crds). Removes stale generated files so renames leave nothing behind. */
/** Generated CRDs go to crds/ (kubectl apply -f crds/) and into the chart, which templates them. */
export const crdDirectories = ['crds/', 'charts/keelson/files/crds/'];

const root = new URL('../../', import.meta.url);
const files = crdFiles();
for (const relative of crdDirectories) {
  const directory = fileURLToPath(new URL(relative, root));
  mkdirSync(directory, { recursive: true });
  for (const existing of readdirSync(directory)) {
    if (existing.endsWith('.yaml') && !files.has(existing)) rmSync(join(directory, existing));
  }
  for (const [name, content] of files) {
    writeFileSync(join(directory, name), content);
    process.stdout.write(`wrote ${relative}${name} (${content.length} bytes)\n`);
  }
}
