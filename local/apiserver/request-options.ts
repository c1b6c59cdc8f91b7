/** Query parameters of writes and deletes, checked as a real server checks them. */
import type { DeleteOptions, WriteOptions } from './api.js';
import { badRequest } from './errors.js';
import { isJsonObject } from './types.js';

export function queryFlag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v === 'true' || v === '1';
}

/** Like a real server, an unnamed field manager is the User-Agent up to its first '/', else "unknown". */
function defaultManager(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0].slice(0, 128) || 'unknown';
}

export function writeOptions(query: URLSearchParams, userAgent?: string): WriteOptions {
  const dryRun = query.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All')) throw badRequest(`dryRun: Unsupported value: "${dryRun.find((d) => d !== 'All')}": supported values: "All"`);
  const fieldValidation = query.get('fieldValidation') ?? undefined;
  if (fieldValidation && !['Strict', 'Warn', 'Ignore'].includes(fieldValidation)) {
    throw badRequest(`fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`);
  }
  const explicitManager = query.get('fieldManager') ?? undefined;
  if (explicitManager !== undefined && (explicitManager.length === 0 || explicitManager.length > 128)) {
    throw badRequest('fieldManager: Invalid value: must be between 1 and 128 characters long');
  }
  return { dryRun: dryRun.length > 0, fieldManager: explicitManager ?? defaultManager(userAgent), explicitManager: explicitManager !== undefined, fieldValidation, force: queryFlag(query, 'force'), warnings: [] };
}

export function deleteOptions(query: URLSearchParams, body: unknown): DeleteOptions {
  const options: DeleteOptions = isJsonObject(body) ? (body as DeleteOptions) : {};
  const policy = query.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const grace = nonNegativeInteger(query, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  if (query.get('orphanDependents') !== null) options.orphanDependents = queryFlag(query, 'orphanDependents');
  if (query.getAll('dryRun').includes('All')) options.dryRun = true;
  if (options.propagationPolicy && !['Background', 'Foreground', 'Orphan'].includes(options.propagationPolicy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return options;
}

export function nonNegativeInteger(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name}: Invalid value: "${raw}": must be a non-negative integer`);
  return Number(raw);
}
