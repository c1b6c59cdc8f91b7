import { join } from 'node:path';
import { fs } from '../../../lib/builtins.js';
import { yaml } from '../../../lib/yaml.js';
import { CollectorConfigError, validateCollector } from './validate.js';
import type { Collector, CollectorSet } from './types.js';

/**
 * One YAML document to load and the name it is reported under: its text, or (for the generated
 * built-in set) the document already parsed.
 */
export type CollectorSource = { file: string; text: string; doc?: undefined } | { file: string; doc: unknown; text?: undefined };

const yamlFilePattern = /\.ya?ml$/i;

/**
 * Parses YAML documents into one collector set. Later sources override earlier branches of the
 * same name, as pg_exporter does. `rankPriorities` gives collectors without a priority
 * 100 + the 1-based rank of their file (pg_exporter's directory mode).
 */
export function parseCollectorSources(sources: CollectorSource[], origin: string, rankPriorities: boolean): CollectorSet {
  const byBranch = new Map<string, Collector>();
  const warnings: string[] = [];
  sources.forEach((source, index) => {
    let doc: unknown = source.doc;
    if (source.text !== undefined) {
      try {
        doc = yaml().parse(source.text, { prettyErrors: true });
      } catch (error) {
        throw new CollectorConfigError(source.file, undefined, undefined, `invalid YAML: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    if (doc === null || doc === undefined) return;
    if (typeof doc !== 'object' || Array.isArray(doc)) {
      throw new CollectorConfigError(source.file, undefined, undefined, 'top level must be a map of collector name to collector');
    }
    for (const [branch, raw] of Object.entries(doc as Record<string, unknown>)) {
      const collector = validateCollector(source.file, branch, raw, warnings);
      const hasPriority = raw !== null && typeof raw === 'object' && (raw as Record<string, unknown>).priority !== undefined;
      if (rankPriorities && !hasPriority) collector.priority = 100 + index + 1;
      if (byBranch.has(branch)) warnings.push(`${source.file}: collector "${branch}" overrides an earlier definition`);
      byBranch.set(branch, collector);
    }
  });
  if (byBranch.size === 0) throw new CollectorConfigError(origin, undefined, undefined, 'no collectors defined');
  return { collectors: [...byBranch.values()], origin, warnings };
}

/**
 * Loads a file or a directory (non-recursive, *.yml / *.yaml in name order). Unlike pg_exporter,
 * a broken file in a directory fails the whole load (see ADR 0101): a half-loaded config would
 * silently drop metrics, and reload keeps the old plan anyway.
 */
export function loadCollectorConfig(path: string): CollectorSet {
  let isDirectory: boolean;
  try {
    isDirectory = fs.statSync(path).isDirectory();
  } catch (error) {
    throw new CollectorConfigError(path, undefined, undefined, `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!isDirectory) return parseCollectorSources([readSource(path)], path, false);
  const files = fs
    .readdirSync(path)
    .filter((name) => yamlFilePattern.test(name))
    .sort();
  if (files.length === 0) throw new CollectorConfigError(path, undefined, undefined, 'directory holds no *.yml or *.yaml files');
  return parseCollectorSources(
    files.map((name) => readSource(join(path, name))),
    path,
    true,
  );
}

function readSource(path: string): CollectorSource {
  try {
    return { file: path, text: fs.readFileSync(path, 'utf8') };
  } catch (error) {
    throw new CollectorConfigError(path, undefined, undefined, `cannot read: ${(error as Error).message}`);
  }
}
