/** Event validation (core/v1): the namespace rules and, for "new" events, the reporting fields. */
import { invalidValue, required, type FieldError } from '../../errors.js';
import type { KubeObject } from '../../types.js';
import { obj } from './define.js';

const mismatch = (value: unknown): FieldError => invalidValue('involvedObject.namespace', value ?? '', 'does not match event.namespace');

/**
 * As a real server's legacy event check: an old-style event (no `eventTime`) lives in its
 * object's namespace, or in "" / "default" for a cluster-scoped object; a new-style one (with
 * `eventTime`) also needs reportingComponent, reportingInstance, action and reason.
 */
export function validateEvent(o: KubeObject): FieldError[] {
  const namespace = o.metadata.namespace ?? '';
  const involved = obj(o.involvedObject).namespace;
  const involvedNamespace = typeof involved === 'string' ? involved : '';
  const errors: FieldError[] = [];
  if (!o.eventTime) {
    if (involvedNamespace ? namespace !== involvedNamespace : namespace !== '' && namespace !== 'default') errors.push(mismatch(involved));
    return errors;
  }
  if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') errors.push(mismatch(involved));
  for (const field of ['reportingComponent', 'reportingInstance', 'action', 'reason']) {
    if (!o[field]) errors.push(required(field));
  }
  return errors;
}
