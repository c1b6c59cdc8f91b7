/** Leases, RBAC, PodDisruptionBudgets and EndpointSlices. */
import { invalidValue, required, type FieldError } from '../../errors.js';
import { isJsonObject, jsonEqual, type KubeObject } from '../../types.js';
import { decodeMicroTime } from '../../writes/validation.js';
import { define, obj, specOf, type BuiltinType } from './define.js';

/** A binding names its role once: a real server refuses to change roleRef (delete and recreate instead). */
function validateBinding(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!isJsonObject(o.roleRef) || !o.roleRef.name) return [required('roleRef.name')];
  return old && !jsonEqual(o.roleRef, old.roleRef) ? [invalidValue('roleRef', o.roleRef, 'cannot change roleRef')] : [];
}

export const otherTypes: BuiltinType[] = [
  define({
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: false,
    columns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }],
    decode: (o) => {
      const spec = obj(o.spec);
      decodeMicroTime(o, 'spec.acquireTime', spec.acquireTime);
      decodeMicroTime(o, 'spec.renewTime', spec.renewTime);
    },
    validate: (o) => {
      const spec = obj(o.spec);
      const errors: FieldError[] = [];
      if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds !== null && !(Number(spec.leaseDurationSeconds) > 0)) {
        errors.push(invalidValue('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
      }
      if (spec.leaseTransitions !== undefined && spec.leaseTransitions !== null && Number(spec.leaseTransitions) < 0) {
        errors.push(invalidValue('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
      }
      return errors;
    },
  }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', nameRule: 'path' }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', nameRule: 'path', validate: validateBinding }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false, nameRule: 'path' }),
  define({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
    nameRule: 'path',
    validate: validateBinding,
  }),
  define({
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    shortNames: ['pdb'],
    statusSubresource: true,
    tracksGeneration: true,
    columns: [
      { name: 'Min Available', type: 'string', jsonPath: '.spec.minAvailable' },
      { name: 'Max Unavailable', type: 'string', jsonPath: '.spec.maxUnavailable' },
      { name: 'Allowed Disruptions', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
    ],
    validate: (o) => {
      const spec = specOf(o);
      return spec.minAvailable !== undefined && spec.maxUnavailable !== undefined
        ? [invalidValue('spec', spec, 'minAvailable and maxUnavailable cannot be both set')]
        : [];
    },
  }),
  define({ group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice' }),
];
