/** CRD `x-kubernetes-validations` (CEL). Placeholder until the evaluator is wired: rules are rejected clearly. */
import type { FieldError } from './errors.js';
import type { KubeObject } from './types.js';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
  optionalOldSelf?: boolean;
}

export function checkRules(rules: unknown, _schema: unknown, path: string): FieldError[] {
  if (!Array.isArray(rules)) return [{ type: 'FieldValueInvalid', field: path, message: 'Invalid value: must be a list of rules' }];
  return rules.length === 0 ? [] : [{ type: 'FieldValueForbidden', field: path, message: 'Forbidden: CEL validation rules are not supported by this server yet' }];
}

export function evaluateRules(_o: KubeObject, _old: KubeObject | undefined, _schema: unknown, _path: string): FieldError[] {
  return [];
}
