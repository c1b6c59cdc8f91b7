/** Kubernetes `Status` failures with the reasons, codes and message shapes a real server uses. */

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** Status details as Go serialises them: empty strings are omitted (`omitempty`), e.g. the core group. */
function details(fields: StatusDetails): StatusDetails {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== '' && v !== undefined)) as StatusDetails;
}

/** "leases.coordination.k8s.io" or "configmaps" for the core group. */
export function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(plural, group)} "${name}" not found`, details({ name, group, kind: plural }));
}

export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(plural, group)} "${name}" already exists`, details({ name, group, kind: plural }));
}

export function conflict(
  plural: string,
  group: string,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(plural, group)} "${name}": ${why}`,
    details({ name, group, kind: plural }),
  );
}

export interface FieldError {
  type:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueDuplicate'
    | 'FieldValueTypeInvalid'
    | 'FieldValueTooLong';
  field: string;
  message: string;
}

const causeText: Record<FieldError['type'], string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooLong: 'Too long',
};

export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

export function required(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, message: `Required value${detail ? `: ${detail}` : ''}` };
}

export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` };
}

/** 422 Invalid: `Kind.group "name" is invalid: [field: message, ...]`. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const subject = group ? `${kind}.${group}` : kind;
  const parts = errors.map((e) => `${e.field}: ${e.message.startsWith(causeText[e.type]) ? e.message : `${causeText[e.type]}: ${e.message}`}`);
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(
    422,
    'Invalid',
    `${subject} "${name}" is invalid: ${summary}`,
    details({
      name,
      group,
      kind,
      causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })),
    }),
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotSupported(plural: string, group: string, verb: string): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource`,
    details({
      group,
      kind: plural,
      causes: [{ reason: 'MethodNotAllowed', message: `${verb} is not supported` }],
    }),
  );
}

export function forbiddenRequest(message: string, plural = '', group = '', name = ''): ApiError {
  return new ApiError(403, 'Forbidden', message, details({ name, group, kind: plural }));
}

export function unsupportedMediaType(type: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${type})`,
  );
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}
