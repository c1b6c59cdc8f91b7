/**
 * Which postgresql.conf parameters a cluster's owner may set. ha-node writes the ones that decide
 * where and how the server listens, replicates and finds its files; a user value for them would
 * break replication or routing, so the operator's spec validation, the CRD's CEL rule and ha-node's
 * PATCH /config all refuse them with these messages.
 */

/** Parameters ha-node sets itself. */
export const managedParameters: readonly string[] = [
  'port',
  'listen_addresses',
  'hot_standby',
  'primary_conninfo',
  'primary_slot_name',
  'data_directory',
  'hba_file',
  'ident_file',
  'config_file',
];

/** A parameter name as PostgreSQL accepts it (customized options carry one dot). */
export const parameterNamePattern = '^[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)?$';

const managed = new Set(managedParameters);
const nameRegex = new RegExp(parameterNamePattern);

/** Why a parameter name cannot be set by the user, or undefined. */
export function parameterNameProblem(name: string): string | undefined {
  if (!nameRegex.test(name)) return 'is not a valid parameter name';
  if (managed.has(name.toLowerCase())) return 'is managed by ha-node and cannot be set here';
  return undefined;
}

/**
 * The CEL rule on the parameters map: no managed name (as written in lower case). The name pattern
 * stays with the operator's validation, so the rule's estimated cost stays small on any server.
 */
export const managedParametersRule = `self.all(k, !(k in [${managedParameters.map((p) => `'${p}'`).join(', ')}]))`;

/** The OpenAPI pattern of a parameter value in the CRD: no control character (postgresql.conf cannot hold a newline in a value). */
export const parameterValuePattern = '^[^\\x00-\\x1f\\x7f]*$';
const noControlCharacter = new RegExp(parameterValuePattern);

/**
 * Why a parameter value can never be loaded, whatever the parameter (checked without a server):
 * a control character in a string, a number that is not finite or only prints with an exponent
 * (postgresql.conf reads 1e+300 as a syntax error that makes PostgreSQL ignore the whole file).
 */
export function parameterValueProblem(value: unknown): string | undefined {
  if (typeof value === 'boolean') return undefined;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'must be a finite number';
    return /e/i.test(String(value)) ? `must be written without an exponent (got ${String(value)})` : undefined;
  }
  if (typeof value !== 'string') return `must be a string, number or boolean (got ${JSON.stringify(value)})`;
  return !noControlCharacter.test(value) ? 'must not contain control characters such as a newline' : undefined;
}
