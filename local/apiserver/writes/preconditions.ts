/**
 * What a write body's metadata pins: resourceVersion (compare-and-swap) and uid (the object, not a
 * namesake created after a delete). PUT and PATCH answer differently, as on a real server.
 */
import { conflict, invalid, invalidValue } from '../errors.js';
import type { ResourceType } from '../schema/resources.js';
import type { KubeObject } from '../types.js';

/** PUT: a missing resourceVersion is 422 where the kind refuses blind writes; a stale one or another uid is 409. */
export function checkUpdatePreconditions(type: ResourceType, old: KubeObject, incoming: KubeObject, name: string): void {
  const rv = incoming.metadata.resourceVersion;
  if (!rv && !type.allowUnconditionalUpdate) {
    throw invalid(type.kind, type.group, name, [
      { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' },
    ]);
  }
  if (rv && rv !== old.metadata.resourceVersion) throw conflict(type.plural, type.group, name);
  // A client holding an object that was deleted and recreated under its name must not overwrite the new one.
  const uid = incoming.metadata.uid;
  if (uid && uid !== old.metadata.uid)
    throw conflict(type.plural, type.group, name, `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${String(old.metadata.uid)}`);
}

/** PATCH: a stale resourceVersion is 409; another uid (the kubelet's status patches carry one) is 422. */
export function checkPatchPreconditions(type: ResourceType, old: KubeObject, candidate: KubeObject, name: string): void {
  const rv = candidate.metadata.resourceVersion;
  if (rv !== undefined && rv !== old.metadata.resourceVersion) throw conflict(type.plural, type.group, name);
  if (candidate.metadata.uid !== undefined && candidate.metadata.uid !== old.metadata.uid) {
    throw invalid(type.kind, type.group, name, [invalidValue('metadata.uid', candidate.metadata.uid, 'field is immutable')]);
  }
}
