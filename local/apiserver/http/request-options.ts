/**
 * The options of every verb, read from the query (and a DELETE's body) and validated before
 * anything is read or written, as a real server does: a value that does not decode is a 400, an
 * option set that does not validate a 422 naming the option. A refused request changes nothing.
 */
import type { DeleteOptions, WriteOptions } from '../api.js';
import { badRequest, type FieldError } from '../errors.js';
import { boolParam, checkResourceVersion, dryRunErrors, goQuote, int64Param, invalidOptions, optionalBoolParam } from './query-params.js';
import { isJsonObject } from '../types.js';

export interface ListParams {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
  watch: boolean;
  allowBookmarks: boolean;
}

/** ListOptions of a list, watch or deletecollection (selector syntax is checked by the matcher). */
export function listParams(query: URLSearchParams): ListParams {
  const params: ListParams = {
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
    resourceVersion: query.get('resourceVersion') ?? undefined,
    limit: int64Param(query, 'limit'),
    continue: query.get('continue') ?? undefined,
    timeoutSeconds: int64Param(query, 'timeoutSeconds'),
    watch: boolParam(query, 'watch'),
    allowBookmarks: boolParam(query, 'allowWatchBookmarks'),
  };
  const match = query.get('resourceVersionMatch');
  if (match) {
    const errors: FieldError[] = [];
    const forbid = (detail: string): void => void errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', message: `Forbidden: ${detail}` });
    if (params.watch) forbid('resourceVersionMatch is forbidden for watch');
    if (!params.resourceVersion) forbid('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (params.continue) forbid('resourceVersionMatch is forbidden when continue is provided');
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errors.push({
        type: 'FieldValueNotSupported',
        field: 'resourceVersionMatch',
        message: `Unsupported value: ${goQuote(match)}: supported values: "Exact", "NotOlderThan", ""`,
      });
    }
    if (match === 'Exact' && params.resourceVersion === '0') forbid('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    if (errors.length > 0) throw invalidOptions('ListOptions', errors);
  }
  checkResourceVersion(params.resourceVersion);
  return params;
}

/** A GET of one object may name a resourceVersion too. */
export function getParams(query: URLSearchParams): void {
  checkResourceVersion(query.get('resourceVersion') ?? undefined);
}

/** Like a real server, an unnamed field manager is the User-Agent up to its first '/', else "unknown". */
function defaultManager(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0].slice(0, 128) || 'unknown';
}

function fieldManagerErrors(manager: string): FieldError[] {
  const errors: FieldError[] = [];
  if (manager.length > 128) errors.push({ type: 'FieldValueTooLong', field: 'fieldManager', message: 'Too long: must have at most 128 bytes' });
  const at = [...manager].findIndex((c) => /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(c) || (/\s/.test(c) && c !== ' '));
  if (at >= 0) {
    const code = manager.codePointAt(at) ?? 0;
    errors.push({
      type: 'FieldValueInvalid',
      field: 'fieldManager',
      message: `Invalid value: ${goQuote(manager)}: invalid character U+${code.toString(16).toUpperCase().padStart(4, '0')} (at position ${at})`,
    });
  }
  return errors;
}

export type WriteVerb = 'create' | 'update' | 'patch' | 'apply';

const optionsKind = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions', apply: 'PatchOptions' } as const;

/** Create, update and patch options; `verb` 'apply' is a server-side apply patch. */
export function writeOptions(query: URLSearchParams, userAgent: string | undefined, verb: WriteVerb): WriteOptions {
  const dryRun = query.getAll('dryRun');
  const manager = query.get('fieldManager') ?? '';
  const force = optionalBoolParam(query, 'force');
  const fieldValidation = query.get('fieldValidation') ?? '';
  const errors: FieldError[] = [];
  if (verb === 'patch' && force !== undefined)
    errors.push({ type: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' });
  if (verb === 'apply' && manager === '')
    errors.push({ type: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' });
  errors.push(...fieldManagerErrors(manager), ...dryRunErrors(dryRun));
  // Current servers validate fieldValidation (1.20 ignored it); the stand-in follows them.
  if (!['', 'Ignore', 'Strict', 'Warn'].includes(fieldValidation)) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'fieldValidation',
      message: `Unsupported value: ${goQuote(fieldValidation)}: supported values: "", "Ignore", "Strict", "Warn"`,
    });
  }
  if (errors.length > 0) throw invalidOptions(optionsKind[verb], errors);
  return {
    dryRun: dryRun.length > 0,
    fieldManager: manager || defaultManager(userAgent),
    explicitManager: manager !== '',
    fieldValidation: fieldValidation || undefined,
    force: force ?? false,
    warnings: [],
  };
}

function bodyTypeError(field: string, goType: string, value: unknown): never {
  const jsonType = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'object' ? 'object' : typeof value;
  throw badRequest(`json: cannot unmarshal ${jsonType} into Go struct field DeleteOptions.${field} of type ${goType}`);
}

/** The DeleteOptions a DELETE body carries, type-checked field by field. */
function bodyDeleteOptions(body: unknown): { options: DeleteOptions; dryRun?: string[] } {
  if (body === undefined || body === null) return { options: {} };
  if (!isJsonObject(body)) bodyTypeError('', 'v1.DeleteOptions', body);
  if (body.kind !== undefined && body.kind !== 'DeleteOptions')
    throw badRequest(`decoded object cannot be converted to DeleteOptions (kind ${goQuote(String(body.kind))})`);
  const options: DeleteOptions = {};
  const { gracePeriodSeconds: grace, propagationPolicy: policy, orphanDependents: orphan, dryRun, preconditions } = body;
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isSafeInteger(grace)) bodyTypeError('gracePeriodSeconds', 'int64', grace);
    options.gracePeriodSeconds = grace;
  }
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== 'string') bodyTypeError('propagationPolicy', 'v1.DeletionPropagation', policy);
    options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  }
  if (orphan !== undefined && orphan !== null) {
    if (typeof orphan !== 'boolean') bodyTypeError('orphanDependents', 'bool', orphan);
    options.orphanDependents = orphan;
  }
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun) || dryRun.some((d) => typeof d !== 'string')) bodyTypeError('dryRun', '[]string', dryRun);
  }
  if (preconditions !== undefined && preconditions !== null) {
    if (!isJsonObject(preconditions)) bodyTypeError('preconditions', 'v1.Preconditions', preconditions);
    for (const key of ['uid', 'resourceVersion'] as const) {
      const v = preconditions[key];
      if (v !== undefined && v !== null && typeof v !== 'string') bodyTypeError(`preconditions.${key}`, 'string', v);
    }
    options.preconditions = preconditions as DeleteOptions['preconditions'];
  }
  return { options, dryRun: Array.isArray(dryRun) ? (dryRun as string[]) : undefined };
}

/**
 * Delete options from the body, with the query's values where the body has none (the query
 * alone when there is no body); both are decoded and the result validated before anything goes.
 */
export function deleteOptions(query: URLSearchParams, body: unknown): DeleteOptions {
  const fromBody = bodyDeleteOptions(body);
  const options = fromBody.options;
  const grace = int64Param(query, 'gracePeriodSeconds');
  if (options.gracePeriodSeconds === undefined && grace !== undefined) options.gracePeriodSeconds = grace;
  const policy = query.get('propagationPolicy');
  if (options.propagationPolicy === undefined && policy !== null) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = optionalBoolParam(query, 'orphanDependents');
  if (options.orphanDependents === undefined && orphan !== undefined) options.orphanDependents = orphan;
  const dryRun = fromBody.dryRun ?? query.getAll('dryRun');
  const errors: FieldError[] = [];
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'propagationPolicy',
      message: `Invalid value: ${goQuote(options.propagationPolicy)}: orphanDependents and deletionPropagation cannot be both set`,
    });
  }
  if (options.propagationPolicy !== undefined && !['Foreground', 'Background', 'Orphan'].includes(options.propagationPolicy)) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'propagationPolicy',
      message: `Unsupported value: ${goQuote(options.propagationPolicy)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
    });
  }
  errors.push(...dryRunErrors(dryRun));
  if (errors.length > 0) throw invalidOptions('DeleteOptions', errors);
  if (dryRun.length > 0) options.dryRun = true;
  // A negative grace period means "now" (1 s on a real server, where 0 would also skip the kubelet).
  if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) options.gracePeriodSeconds = 1;
  return options;
}
