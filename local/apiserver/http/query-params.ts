/**
 * Query values decoded as a real server decodes them (apimachinery's url.Values conversions):
 * the first value of a repeated parameter wins, integers are Go's strconv.ParseInt, booleans are
 * false only for "0" or "false". A value that does not decode is a 400 with Go's message.
 */
import { ApiError, badRequest, type FieldError } from '../errors.js';

/** Go's strconv.Quote for the ASCII range: control characters as \xNN. */
export function goQuote(text: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' };
  return `"${[...text].map((c) => named[c] ?? (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c)).join('')}"`;
}

const int64Max = 2n ** 63n - 1n;

/** strconv.ParseInt(value, 10, 64); undefined when the parameter is absent. */
export function int64Param(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^[+-]?\d+$/.test(raw)) throw badRequest(`strconv.ParseInt: parsing ${goQuote(raw)}: invalid syntax`);
  const value = BigInt(raw);
  if (value > int64Max || value < -int64Max - 1n) throw badRequest(`strconv.ParseInt: parsing ${goQuote(raw)}: value out of range`);
  return Number(value);
}

/** A boolean parameter: absent, "0" or "false" (any case) is false; anything else, even "", true. */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  return raw !== null && raw !== '0' && raw.toLowerCase() !== 'false';
}

/** A pointer boolean (`force`, `orphanDependents`): undefined when absent. */
export function optionalBoolParam(query: URLSearchParams, name: string): boolean | undefined {
  return query.get(name) === null ? undefined : boolParam(query, name);
}

/**
 * A resourceVersion as etcd's versioner parses it: "" and "0" mean "any", anything else must be
 * an unsigned 64-bit integer. 1.20 lets this error through as a 500; a bad query value is the
 * client's fault, so the stand-in answers 400 with the same message.
 */
export function checkResourceVersion(value: string | undefined): void {
  if (value === undefined || value === '' || value === '0') return;
  if (!/^\d+$/.test(value)) throw badRequest(`resourceVersion: Invalid value: ${goQuote(value)}: strconv.ParseUint: parsing ${goQuote(value)}: invalid syntax`);
  if (BigInt(value) > 2n ** 64n - 1n)
    throw badRequest(`resourceVersion: Invalid value: ${goQuote(value)}: strconv.ParseUint: parsing ${goQuote(value)}: value out of range`);
}

/** An options-validation failure: 422 `<Kind>.meta.k8s.io "" is invalid: ...` as a real server answers. */
export function invalidOptions(kind: 'ListOptions' | 'DeleteOptions' | 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', errors: FieldError[]): ApiError {
  const parts = errors.map((e) => `${e.field}: ${e.message}`);
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: ${summary}`, {
    group: 'meta.k8s.io',
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
  });
}

/** dryRun may only hold "All" (the message prints the list as Go's %#v does). */
export function dryRunErrors(values: string[]): FieldError[] {
  if (values.every((v) => v === 'All')) return [];
  return [
    { type: 'FieldValueNotSupported', field: 'dryRun', message: `Unsupported value: []string{${values.map(goQuote).join(', ')}}: supported values: "All"` },
  ];
}
