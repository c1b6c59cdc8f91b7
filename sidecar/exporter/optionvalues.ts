/**
 * Flag / environment / default resolution for the exporter's options. lib/config does the same
 * with zod schemas; the exporter has its own few readers because zod alone adds ~5 MB of resident
 * memory to a sidecar that runs in every database pod. Messages use lib/config's wording.
 */
/** An error naming the option and where its value came from (lib/config's wording, so users see one style). */
export function optionError(key: string, source: string, detail: string): Error {
  return Object.assign(new Error(`invalid configuration key "${key}" (from ${source}): ${detail}`), { name: 'ConfigError', key, source });
}

export interface OptionSpec<T> {
  env?: string;
  default: T;
  /** Turns a flag value (string, boolean or string list from commander) or an env string into T; throws with the reason. */
  parse(raw: unknown): T;
}

/** A flag wins over the environment (an empty variable counts as unset), which wins over the default. */
export function readOption<T>(key: string, spec: OptionSpec<T>, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): T {
  let raw: unknown;
  let source: string;
  const envValue = spec.env ? env[spec.env] : undefined;
  if (flags[key] !== undefined) {
    raw = flags[key];
    source = `flag --${key}`;
  } else if (envValue !== undefined && envValue !== '') {
    raw = envValue;
    source = `env ${spec.env}`;
  } else {
    return spec.default;
  }
  try {
    return spec.parse(raw);
  } catch (error) {
    throw optionError(key, source, (error as Error).message);
  }
}

export function text(raw: unknown): string {
  if (typeof raw !== 'string') throw new Error('expected a string');
  return raw;
}

export function nonEmptyText(raw: unknown): string {
  if (text(raw) === '') throw new Error('expected a non-empty string');
  return raw as string;
}

export function list(raw: unknown): string[] {
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) return raw;
  if (typeof raw === 'string')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  throw new Error('expected a comma-separated list');
}

export function flag(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  const value = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new Error(`expected a boolean (true/false, 1/0, yes/no, on/off), got ${JSON.stringify(raw)}`);
}

export const integerAtLeast =
  (min: number) =>
  (raw: unknown): number => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min) throw new Error(`expected an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
    return n;
  };

export const oneOf =
  <T extends string>(...values: T[]) =>
  (raw: unknown): T => {
    if (typeof raw !== 'string' || !(values as string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}`);
    return raw as T;
  };
