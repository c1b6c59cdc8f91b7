/**
 * Container environment as the kubelet builds it: base variables, then `envFrom` sources, then
 * `env` entries (later wins), with downward-API `fieldRef`, `secretKeyRef`, `configMapKeyRef` and
 * `resourceFieldRef`, and `$(VAR)` expansion against variables defined before (`$$` escapes).
 */
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';

export interface EnvSources {
  /** Returns the Secret's decoded data, or undefined when it does not exist. */
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

export interface PodRuntimeFacts {
  podIP: string;
  hostIP: string;
  nodeName: string;
}

export class EnvResolutionError extends Error {
  constructor(
    message: string,
    readonly reason = 'CreateContainerConfigError',
  ) {
    super(message);
  }
}

/** `$(NAME)` → value when NAME is defined, `$$(NAME)` → literal `$(NAME)`, anything else untouched. */
export function expandVariables(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : match;
  });
}

/** Resolves a downward-API field path (`metadata.name`, `metadata.labels['app']`, `status.podIP`, …). */
export function resolveFieldPath(pod: V1Pod, fieldPath: string, facts: PodRuntimeFacts): string {
  const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (keyed) {
    const map = keyed[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[keyed[2]] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName || facts.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return facts.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return facts.hostIP;
    default:
      throw new EnvResolutionError(`unsupported fieldRef fieldPath "${fieldPath}"`);
  }
}

/** Limits and requests as plain numbers: cpu in whole cores (rounded up), memory in bytes. */
function resolveResourceField(container: V1Container, resource: string): string {
  const [section, name] = resource.split('.');
  const table = section === 'requests' ? container.resources?.requests : container.resources?.limits;
  const raw = table?.[name];
  if (raw === undefined) return name === 'cpu' ? '2' : String(8 * 1024 ** 3);
  return String(raw);
}

async function resolveEntry(
  entry: V1EnvVar,
  pod: V1Pod,
  container: V1Container,
  facts: PodRuntimeFacts,
  sources: EnvSources,
  vars: Record<string, string>,
): Promise<string | undefined> {
  const namespace = pod.metadata?.namespace ?? 'default';
  if (entry.valueFrom === undefined) return expandVariables(entry.value ?? '', vars);
  const from = entry.valueFrom;
  if (from.fieldRef) return resolveFieldPath(pod, from.fieldRef.fieldPath, facts);
  if (from.resourceFieldRef) return resolveResourceField(container, from.resourceFieldRef.resource);
  const ref = from.secretKeyRef ?? from.configMapKeyRef;
  if (ref) {
    const kind = from.secretKeyRef ? 'secret' : 'configmap';
    const data = from.secretKeyRef ? await sources.secret(namespace, ref.name ?? '') : await sources.configMap(namespace, ref.name ?? '');
    const value = data?.[ref.key];
    if (value === undefined) {
      if (ref.optional) return undefined;
      throw new EnvResolutionError(data ? `couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name}` : `${kind} "${ref.name}" not found`);
    }
    return value;
  }
  throw new EnvResolutionError(`env ${entry.name}: unsupported valueFrom`);
}

/** Builds the full environment for one container. `base` holds agent-provided variables (PATH, KUBECONFIG, …). */
export async function resolveContainerEnv(
  pod: V1Pod,
  container: V1Container,
  facts: PodRuntimeFacts,
  sources: EnvSources,
  base: Record<string, string>,
): Promise<Record<string, string>> {
  const vars: Record<string, string> = { ...base };
  const namespace = pod.metadata?.namespace ?? 'default';
  for (const source of container.envFrom ?? []) {
    const ref = source.secretRef ?? source.configMapRef;
    if (!ref) continue;
    const data = source.secretRef ? await sources.secret(namespace, ref.name ?? '') : await sources.configMap(namespace, ref.name ?? '');
    if (!data) {
      if (ref.optional) continue;
      throw new EnvResolutionError(`${source.secretRef ? 'secret' : 'configmap'} "${ref.name}" not found`);
    }
    for (const [key, value] of Object.entries(data)) vars[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const entry of container.env ?? []) {
    const value = await resolveEntry(entry, pod, container, facts, sources, vars);
    if (value !== undefined) vars[entry.name] = value;
  }
  return vars;
}
