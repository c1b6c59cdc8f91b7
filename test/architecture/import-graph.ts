import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The import graph of the non-test sources, read from the files themselves (static `import … from`,
 * `import '…'` and `export … from` statements; the lazy `import()` of a program's command.ts stays
 * inside its program). Used by imports.test.ts to keep the floors programs → api → lib.
 */

export const sourceRoots = ['bin', 'api', 'lib', 'operator', 'sidecar', 'admin', 'local'];

/** A file's edges: the repository-relative paths of the .ts files it imports. */
export type ImportGraph = Map<string, string[]>;

const staticImport = /^\s*(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir))) {
    const path = join(dir, entry);
    if (entry === 'node_modules') continue;
    if (statSync(join(root, path)).isDirectory()) found.push(...sourceFiles(root, path));
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

/** Relative specifiers written with .js (NodeNext) resolve to the .ts source beside them. */
function resolveSpecifier(root: string, from: string, specifier: string): string {
  const absolute = resolve(root, dirname(from), specifier.replace(/\.js$/, '.ts'));
  return relative(root, absolute).split(sep).join('/');
}

export function importGraph(root: string, options: { withTypeOnly: boolean } = { withTypeOnly: true }): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const top of sourceRoots) {
    let files: string[];
    try {
      files = sourceFiles(root, top);
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      const targets = new Set<string>();
      for (const match of text.matchAll(staticImport)) {
        if (match[1] && !options.withTypeOnly) continue;
        targets.add(resolveSpecifier(root, file, match[2]));
      }
      graph.set(file.split(sep).join('/'), [...targets]);
    }
  }
  return graph;
}

/** The program a file belongs to (sidecar's programs are its subfolders), or its floor's name. */
export function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'sidecar' && parts.length > 2) return `sidecar/${parts[1]}`;
  if (parts[0] === 'sidecar') return 'sidecar';
  return parts[0];
}

/** Floors, lowest first: lib < api < programs < bin. */
export function floorOf(unit: string): number {
  if (unit === 'lib') return 0;
  if (unit === 'api') return 1;
  if (unit === 'bin') return 3;
  return 2;
}

export interface FolderArrow {
  from: string;
  to: string;
  file: string;
  target: string;
}

/** Imports from a lower floor to a higher one, and from one program into another. */
export function folderArrows(graph: ImportGraph): { upward: FolderArrow[]; sideways: FolderArrow[] } {
  const upward: FolderArrow[] = [];
  const sideways: FolderArrow[] = [];
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    for (const target of targets) {
      const to = unitOf(target);
      if (from === to) continue;
      const arrow = { from, to, file, target };
      if (floorOf(to) > floorOf(from)) upward.push(arrow);
      else if (floorOf(to) === 2 && floorOf(from) === 2) sideways.push(arrow);
    }
  }
  return { upward, sideways };
}

/** Strongly connected components of more than one file (Tarjan), each sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}
