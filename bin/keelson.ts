#!/usr/bin/env node
// First: refuse a Node.js that cannot run Keelson, before anything that could crash on it loads.
import '../lib/cli/node-check.js';
// Then, alone: the exporter's V8 flags. The program is imported only afterwards, because Node
// resolves every static import of a module graph before it runs any of it, and resolving the whole
// program's ~100 modules makes its resolver code hot enough for TurboFan (bin/exporter-early-flags.ts).
import './exporter-early-flags.js';

const { createProgram } = await import('./program.js');
await createProgram().parseAsync(process.argv);
