import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * Typed configuration from four sources, highest precedence first: command-line flags, environment
 * variables, a YAML/JSON file, defaults. Every error names the key and the source it came from.
 */
export interface ConfigKey<T> {
  schema: z.ZodType<T>;
  /** Environment variable that sets this key. */
  env?: string;
  /** Turns a string from the environment or a flag into the value the schema checks. */
  fromString?: (raw: string) => unknown;
  default?: T;
  description?: string;
  /** The file may hold a map under this key: one value, checked whole by the schema (its inner keys are not settings). */
  document?: boolean;
}

export type ConfigSpec = Record<string, ConfigKey<unknown>>;
export type ConfigOf<S extends ConfigSpec> = { [K in keyof S]: S[K] extends ConfigKey<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly source: string,
    detail: string,
  ) {
    super(`invalid configuration key "${key}" (from ${source}): ${detail}`);
    this.name = 'ConfigError';
  }
}

export interface ConfigSources {
  /** Values given as flags, keyed like the spec; undefined entries are ignored. */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Path of a YAML or JSON file whose top-level keys (dotted paths for nested maps) match the spec. */
  file?: string;
}

export const stringKey = (opts: Omit<ConfigKey<string>, 'schema'> & { schema?: z.ZodType<string> } = {}): ConfigKey<string> => ({
  schema: z.string().min(1),
  ...opts,
});

export const numberKey = (opts: Omit<ConfigKey<number>, 'schema'> & { schema?: z.ZodType<number> } = {}): ConfigKey<number> => ({
  schema: z.number().finite(),
  fromString: (raw) => (raw.trim() === '' ? raw : Number(raw)),
  ...opts,
});

export const booleanKey = (opts: Omit<ConfigKey<boolean>, 'schema'> = {}): ConfigKey<boolean> => ({
  schema: z.boolean(),
  fromString: parseBoolean,
  ...opts,
});

export const listKey = (opts: Omit<ConfigKey<string[]>, 'schema'> = {}): ConfigKey<string[]> => ({
  schema: z.array(z.string()),
  fromString: (raw) =>
    raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ...opts,
});

export function parseBoolean(raw: string): unknown {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  return raw;
}

function readFileValues(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('(file)', path, `cannot read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError('(file)', path, `not valid YAML/JSON: ${(error as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('(file)', path, 'top level must be a map');
  }
  return flatten(parsed as Record<string, unknown>);
}

function flatten(value: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      out[path] = inner;
      Object.assign(out, flatten(inner as Record<string, unknown>, path));
    } else {
      out[path] = inner;
    }
  }
  return out;
}

function describeIssue(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length ? `${issue.path.join('.')}: ` : '') + issue.message).join('; ');
}

export function loadConfig<S extends ConfigSpec>(spec: S, sources: ConfigSources = {}): ConfigOf<S> {
  const env = sources.env ?? process.env;
  const fileValues = sources.file ? readFileValues(sources.file) : {};
  if (sources.file) {
    const known = new Set(Object.keys(spec));
    for (const key of Object.keys(fileValues)) {
      const isPrefixOfKnown = [...known].some((k) => k.startsWith(`${key}.`));
      const isInsideDocument = Object.entries(spec).some(([k, def]) => def.document === true && key.startsWith(`${k}.`));
      if (!known.has(key) && !isPrefixOfKnown && !isInsideDocument) {
        throw new ConfigError(key, `file ${sources.file}`, `unknown key; known keys: ${[...known].join(', ')}`);
      }
    }
  }
  const result: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(spec)) {
    let raw: unknown;
    let source: string;
    const flag = sources.flags?.[key];
    const envValue = def.env ? env[def.env] : undefined;
    if (flag !== undefined) {
      raw = typeof flag === 'string' && def.fromString ? def.fromString(flag) : flag;
      source = `flag --${key}`;
    } else if (envValue !== undefined && envValue !== '') {
      raw = def.fromString ? def.fromString(envValue) : envValue;
      source = `env ${def.env}`;
    } else if (key in fileValues) {
      const value = fileValues[key];
      raw = typeof value === 'string' && def.fromString ? def.fromString(value) : value;
      source = `file ${sources.file}`;
    } else if (def.default !== undefined) {
      raw = def.default;
      source = 'default';
    } else {
      raw = undefined;
      source = 'nowhere (no flag, env, file or default)';
    }
    const checked = def.schema.safeParse(raw);
    if (!checked.success) throw new ConfigError(key, source, describeIssue(checked.error));
    result[key] = checked.data;
  }
  return result as ConfigOf<S>;
}
