import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { builtinDocsModule, renderBuiltinDocsModule } from './builtin-data.js';

/** Regenerates the parsed built-in collector set (npm run collectors) after a change to its YAML. */
const target = fileURLToPath(new URL(`../../../${builtinDocsModule}`, import.meta.url));
const content = renderBuiltinDocsModule();
writeFileSync(target, content);
process.stdout.write(`wrote ${builtinDocsModule} (${content.length} bytes)\n`);
