/**
 * storage.k8s.io/v1 StorageClasses, and the two admission plugins of a real server that read them
 * when a PersistentVolumeClaim is written: DefaultStorageClass (a claim without a class gets the
 * default one on create) and PersistentVolumeClaimResize (a claim grows only when it is Bound and
 * its class has `allowVolumeExpansion: true`; otherwise 403).
 */
import { forbidden, forbiddenRequest, invalidValue, required, type FieldError } from '../../errors.js';
import type { ObjectReader } from '../resources.js';
import { isJsonObject, jsonEqual, type KubeObject } from '../../types.js';
import { quantityValue, storageOf } from './claims.js';
import { computedColumn, define, obj } from './define.js';

const classesKey = 'storage.k8s.io/storageclasses';
const defaultClassAnnotations = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
/** The pre-1.6 way of naming a claim's class; a claim carrying it "has a class" too. */
const betaClaimClassAnnotation = 'volume.beta.kubernetes.io/storage-class';

const isDefaultClass = (sc: KubeObject): boolean => defaultClassAnnotations.some((a) => sc.metadata.annotations?.[a] === 'true');

function validateStorageClass(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!o.provisioner) return [required('provisioner')];
  if (!old) return [];
  // Only allowVolumeExpansion (and metadata) may change after creation.
  const errors: FieldError[] = [];
  for (const field of ['parameters', 'provisioner', 'reclaimPolicy']) {
    if (!jsonEqual(o[field], old[field])) errors.push(forbidden(field, `updates to ${field} are forbidden.`));
  }
  if (o.volumeBindingMode !== old.volumeBindingMode) errors.push(invalidValue('volumeBindingMode', o.volumeBindingMode, 'field is immutable'));
  return errors;
}

export const storageClassType = define({
  group: 'storage.k8s.io',
  version: 'v1',
  plural: 'storageclasses',
  kind: 'StorageClass',
  namespaced: false,
  shortNames: ['sc'],
  columns: [
    { name: 'Provisioner', type: 'string', jsonPath: '.provisioner' },
    { name: 'ReclaimPolicy', type: 'string', jsonPath: '.reclaimPolicy' },
    { name: 'VolumeBindingMode', type: 'string', jsonPath: '.volumeBindingMode' },
    computedColumn((o) => o.allowVolumeExpansion === true, 'AllowVolumeExpansion'),
  ],
  nameCell: (o) => (isDefaultClass(o) ? `${String(o.metadata.name)} (default)` : String(o.metadata.name)),
  defaults: (o) => {
    o.reclaimPolicy ??= 'Delete';
    o.volumeBindingMode ??= 'Immediate';
  },
  validate: validateStorageClass,
});

/**
 * DefaultStorageClass: a new claim that names no class (an explicit "" is a name) gets the default
 * one. With several defaults the newest wins, as on servers since 1.26 (1.20 refused the claim).
 */
export function assignDefaultClass(claim: KubeObject, objects: ObjectReader): void {
  if (claim.spec !== undefined && !isJsonObject(claim.spec)) return; // decoding refuses it next
  const spec = obj(claim.spec);
  if (spec.storageClassName !== undefined && spec.storageClassName !== null) return;
  if (claim.metadata.annotations?.[betaClaimClassAnnotation] !== undefined) return;
  const defaults = objects.list(classesKey).filter(isDefaultClass);
  if (defaults.length === 0) return;
  const newest = defaults.reduce((a, b) => (String(b.metadata.creationTimestamp) > String(a.metadata.creationTimestamp) ? b : a));
  claim.spec = { ...spec, storageClassName: newest.metadata.name as string };
}

function classOf(claim: KubeObject): string {
  const name = obj(claim.spec).storageClassName ?? claim.metadata.annotations?.[betaClaimClassAnnotation];
  return typeof name === 'string' ? name : '';
}

/**
 * PersistentVolumeClaimResize: the 403 a real server gives a growth its class cannot carry out.
 * (Growing an unbound claim never gets here: validation refuses it first with a 422.)
 */
export function checkClaimResize(claim: KubeObject, old: KubeObject, objects: ObjectReader): void {
  if (!(quantityValue(storageOf(obj(claim.spec))) > quantityValue(storageOf(obj(old.spec))))) return;
  const className = classOf(claim);
  const storageClass = className && className === classOf(old) ? objects.get(classesKey, undefined, className) : undefined;
  if (storageClass?.allowVolumeExpansion === true) return;
  const name = String(claim.metadata.name);
  throw forbiddenRequest(
    `persistentvolumeclaims "${name}" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`,
    'persistentvolumeclaims',
    '',
    name,
  );
}
