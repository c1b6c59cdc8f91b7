import { managedRolesSchema } from '../../../api/crd/managed-roles.js';

/** PATCH /config's check of `roles`: the spec's own schema, the first problem named by its path ("[2].name: ..."). */
export function managedRolesCheck(value: unknown): string | undefined {
  const parsed = managedRolesSchema.safeParse(value);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  return path ? `${path}: ${issue.message}` : issue.message;
}
