import type { ApiCore } from '../api.js';
import { ApiError, badRequest } from '../errors.js';
import type { ResourceType } from '../schema/resources.js';
import { isJsonObject } from '../types.js';

/** pods/NAME/binding: the scheduler's way to set spec.nodeName once. */
export function bindPod(core: ApiCore, type: ResourceType, namespace: string | undefined, name: string, body: unknown): Record<string, unknown> {
  const target = isJsonObject(body) && isJsonObject(body.target) ? body.target : undefined;
  if (!target || typeof target.name !== 'string' || target.name === '') throw badRequest('Binding.target.name is required');
  const pod = core.get(type, namespace, name);
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  if (spec.nodeName)
    throw new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${String(spec.nodeName)}"`,
      { name, kind: 'pods/binding' },
    );
  if (pod.metadata.deletionTimestamp)
    throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is being deleted, cannot be assigned to a host`);
  pod.spec = { ...spec, nodeName: target.name };
  core.bindUpdate(type, pod);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}
