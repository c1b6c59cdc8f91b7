#!/usr/bin/env node
// Moves files with `git mv` and rewrites every relative import in the repository to follow them.
// Usage: node scripts/dev/move-files.mjs <map-file>   (one "old new" pair a line, paths from the
// repository root; a pair may name a file or a folder). Imports are resolved to absolute paths,
// mapped, and recomputed, so the same map replays cleanly on another branch after a merge.
// Covers `import … from`, `export … from`, `import '…'` and `import('…')`; string paths elsewhere
// (spawned scripts, docs, package.json) are left for a grep.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const mapFile = process.argv[2];
if (!mapFile) {
  console.error('usage: move-files.mjs <map-file>');
  process.exit(2);
}
const codeExt = /\.(ts|js|mts|mjs|cts|cjs|tsx)$/;
const strip = (p) => p.replace(codeExt, '');
const pairs = readFileSync(mapFile, 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'))
  .map((line) => {
    const [from, to] = line.split(/\s+/);
    if (!from || !to) throw new Error(`bad line: ${line}`);
    return { from: path.normalize(from).replace(/\/$/, ''), to: path.normalize(to).replace(/\/$/, '') };
  });

/** Where a repository path (with or without its extension) lives after the moves. */
function mapped(p) {
  for (const { from, to } of pairs) {
    if (p === from) return to;
    if (strip(p) === strip(from) && codeExt.test(from)) return strip(to) + p.slice(strip(p).length);
    if (p.startsWith(from + '/')) return to + p.slice(from.length);
  }
  return p;
}

const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => codeExt.test(f) && existsSync(path.join(root, f)));
const specifier = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bexport\s*\*\s*from\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;

const rewritten = new Map();
for (const file of files) {
  const text = readFileSync(path.join(root, file), 'utf8');
  const newFile = mapped(file);
  const next = text.replace(specifier, (whole, lead, quote, spec) => {
    const target = path.normalize(path.join(path.dirname(file), spec));
    // A specifier that names no file here (say inside a script string run from elsewhere) stays.
    if (![target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')].some((t) => existsSync(path.join(root, t)))) return whole;
    const newTarget = mapped(target);
    if (newTarget === target && newFile === file) return whole;
    let rel = path.relative(path.dirname(newFile), newTarget);
    if (!rel.startsWith('.')) rel = './' + rel;
    return `${lead}${quote}${rel}${quote}`;
  });
  if (next !== text) rewritten.set(newFile, next);
}
for (const { from, to } of pairs) {
  mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
  execFileSync('git', ['mv', from, to], { cwd: root, stdio: 'inherit' });
}
for (const [file, text] of rewritten) writeFileSync(path.join(root, file), text);
console.log(`moved ${pairs.length} paths, rewrote imports in ${rewritten.size} files`);
