import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFiles } from './crd-files.js';

/** Regenerates crds/ (npm run crds). Removes stale generated files so renames leave nothing behind. */
const directory = fileURLToPath(new URL('../../crds/', import.meta.url));
mkdirSync(directory, { recursive: true });
const files = crdFiles();
for (const existing of readdirSync(directory)) {
  if (existing.endsWith('.yaml') && !files.has(existing)) rmSync(join(directory, existing));
}
for (const [name, content] of files) {
  writeFileSync(join(directory, name), content);
  process.stdout.write(`wrote crds/${name} (${content.length} bytes)\n`);
}
