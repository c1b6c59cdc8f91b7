#!/usr/bin/env node
// Moves TypeScript modules with `git mv` and rewrites every relative import of them (and the moved
// files' own relative imports): each specifier is resolved to an absolute path from the importing
// file's old place, mapped through the moves, and written again relative to the file's new place.
// Usage: node scripts/dev/move-modules.mjs old/path.ts=new/path.ts [...]   (from the repository root)
// Covers `import … from`, `export … from`, `import '…'` and `import('…')`; string paths elsewhere
// (spawned scripts, docs, package.json) are left for a grep.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const roots = ['bin', 'api', 'lib', 'operator', 'sidecar', 'admin', 'local', 'test', 'bench', 'scripts'];
const root = process.cwd();
const moves = new Map();
for (const argument of process.argv.slice(2)) {
  const [from, to] = argument.split('=');
  if (!from || !to || !existsSync(from)) throw new Error(`bad move ${argument}`);
  moves.set(resolve(root, from), resolve(root, to));
}

function sources(dir) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...sources(path));
    else if (/\.(ts|mts|mjs|js)$/.test(entry)) found.push(path);
  }
  return found;
}

const specifier = /(\bfrom\s+|\bimport\s+|\bimport\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

function rewrite(text, oldFile, newFile) {
  return text.replace(specifier, (whole, lead, quote, spec) => {
    const ext = spec.endsWith('.js') ? '.js' : '';
    const target = resolve(dirname(oldFile), spec);
    const targetTs = ext ? target.replace(/\.js$/, '.ts') : target;
    const movedTs = moves.get(targetTs) ?? targetTs;
    if (movedTs === targetTs && oldFile === newFile) return whole;
    const moved = ext ? movedTs.replace(/\.ts$/, '.js') : movedTs;
    let next = relative(dirname(newFile), moved).split(sep).join('/');
    if (!next.startsWith('.')) next = `./${next}`;
    return `${lead}${quote}${next}${quote}`;
  });
}

const files = roots.flatMap((dir) => sources(resolve(root, dir)));
const changed = new Map();
for (const file of files) {
  const newFile = moves.get(file) ?? file;
  const text = readFileSync(file, 'utf8');
  const next = rewrite(text, file, newFile);
  if (next !== text || newFile !== file) changed.set(file, next);
}
for (const [from, to] of moves) {
  mkdirSync(dirname(to), { recursive: true });
  execFileSync('git', ['mv', relative(root, from), relative(root, to)]);
}
let rewritten = 0;
for (const [file, text] of changed) {
  const target = moves.get(file) ?? file;
  if (readFileSync(target, 'utf8') !== text) {
    writeFileSync(target, text);
    rewritten += 1;
  }
}
process.stdout.write(`moved ${moves.size} files, rewrote imports in ${rewritten}\n`);
