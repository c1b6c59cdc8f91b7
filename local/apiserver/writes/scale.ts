/** The autoscaling/v1 Scale subresource (kubectl scale, HPA-style clients). */
import type { ApiCore, PatchType, WriteOptions } from '../api.js';
import { badRequest, conflict, invalid, invalidValue } from '../errors.js';
import { getPath, setPath } from '../schema/jsonpath.js';
import { applyJsonPatch, applyMergePatch } from './patch.js';
import type { ResourceType } from '../schema/resources.js';
import { formatLabelSelector, type LabelSelectorObject } from '../storage/selectors.js';
import { clone, isJsonObject, type JsonObject, type KubeObject } from '../types.js';

function selectorOf(type: ResourceType, o: KubeObject): string {
  const fromPath = type.scale?.labelSelectorPath ? getPath(o, type.scale.labelSelectorPath) : undefined;
  if (typeof fromPath === 'string') return fromPath;
  const spec = isJsonObject(o.spec) ? o.spec : {};
  return isJsonObject(spec.selector) ? formatLabelSelector(spec.selector as LabelSelectorObject) : '';
}

function toScale(type: ResourceType, o: KubeObject): KubeObject {
  const scale = type.scale as NonNullable<ResourceType['scale']>;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
      creationTimestamp: o.metadata.creationTimestamp,
    },
    spec: { replicas: Number(getPath(o, scale.specReplicasPath) ?? 0) },
    status: { replicas: Number(getPath(o, scale.statusReplicasPath) ?? 0), selector: selectorOf(type, o) },
  };
}

export function getScale(core: ApiCore, type: ResourceType, namespace: string | undefined, name: string): KubeObject {
  return toScale(type, core.get(type, namespace, name));
}

export function updateScale(
  core: ApiCore,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  body: unknown,
  patchType: PatchType | undefined,
  options: WriteOptions,
): KubeObject {
  const current = core.get(type, namespace, name);
  const scale = toScale(type, current);
  let wanted: JsonObject;
  if (patchType === undefined) {
    if (!isJsonObject(body)) throw badRequest('Scale body must be an object');
    wanted = body;
  } else if (patchType === 'json') wanted = applyJsonPatch(scale, body);
  else if (patchType === 'merge' || patchType === 'strategic' || patchType === 'apply') wanted = applyMergePatch(scale, body) as JsonObject;
  else throw badRequest('unsupported patch type');
  const meta = isJsonObject(wanted.metadata) ? wanted.metadata : {};
  if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' && meta.resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(type.plural, type.group, name);
  }
  const replicas = isJsonObject(wanted.spec) ? wanted.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw badRequest(`Scale in version "v1" cannot be handled as a Scale: spec.replicas: expected an integer, got ${JSON.stringify(replicas)}`);
  }
  // Built-ins validate the Scale itself; a custom resource gets the value written into its
  // specReplicasPath and its CRD schema judges it (a 422 naming e.g. spec.instances).
  if (!type.crdName && replicas < 0) {
    throw invalid('Scale', 'autoscaling', name, [invalidValue('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  const next = clone(current);
  setPath(next, (type.scale as NonNullable<ResourceType['scale']>).specReplicasPath, replicas);
  const { object } = core.update(type, namespace, name, next, undefined, options);
  return toScale(type, object);
}
