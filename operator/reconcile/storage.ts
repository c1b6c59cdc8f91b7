import type { V1PersistentVolumeClaim, V1StatefulSet } from '@kubernetes/client-node';

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

const factors: Record<string, number> = {
  '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** Bytes of a storage quantity ("10Gi", "500M", "1e9"); undefined when it is not one. */
export function quantityBytes(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(value.trim());
  if (!match) return undefined;
  return Number(match[1]) * (factors[match[2] ?? ''] ?? 1);
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
