import type { V1PersistentVolumeClaim, V1StatefulSet } from '@kubernetes/client-node';
import { quantityBytes } from '../../api/crd/quantity.js';

/**
 * StatefulSet fields the API server refuses to change after creation. The desired StatefulSet
 * takes them from the stored one, so a changed spec.storage never turns into a replace that fails
 * forever; storage growth is applied to the PVCs directly instead (volumeClaimTemplates cannot
 * change — kubernetes/enhancements#661).
 */
export function keepImmutableFields(desired: V1StatefulSet, observed: V1StatefulSet | undefined): V1StatefulSet {
  if (!observed?.spec || !desired.spec) return desired;
  return {
    ...desired,
    spec: {
      ...desired.spec,
      selector: observed.spec.selector,
      serviceName: observed.spec.serviceName,
      podManagementPolicy: observed.spec.podManagementPolicy,
      volumeClaimTemplates: observed.spec.volumeClaimTemplates,
    },
  };
}

/** PVCs of the cluster smaller than the wanted size (they get patched; shrinking is never attempted). */
export function claimsToGrow(claims: V1PersistentVolumeClaim[], wanted: string): V1PersistentVolumeClaim[] {
  const target = quantityBytes(wanted);
  if (target === undefined) return [];
  return claims.filter((claim) => {
    const current = quantityBytes(claim.spec?.resources?.requests?.storage as string | undefined);
    return current !== undefined && current < target;
  });
}

/** PVCs of the cluster larger than the wanted size: volumes never shrink, so these keep their size. */
export function claimsAboveSize(claims: V1PersistentVolumeClaim[], wanted: string): V1PersistentVolumeClaim[] {
  const target = quantityBytes(wanted);
  if (target === undefined) return [];
  return claims.filter((claim) => {
    const current = quantityBytes(claim.spec?.resources?.requests?.storage as string | undefined);
    return current !== undefined && current > target;
  });
}
