/** Pods: defaults, the checks a real server makes, printer columns, graceful-deletion fields. */
import { forbidden, required, type FieldError } from '../../errors.js';
import { isJsonObject, jsonEqual, type JsonObject, type KubeObject } from '../../types.js';
import { validateName } from '../../writes/validation.js';
import { computedColumn, define, obj, specOf, type BuiltinType } from './define.js';

export function defaultPodSpec(spec: JsonObject): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const list of ['containers', 'initContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      if (!isJsonObject(c)) continue;
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.imagePullPolicy ??= typeof c.image === 'string' && (c.image.endsWith(':latest') || !c.image.includes(':')) ? 'Always' : 'IfNotPresent';
      if (Array.isArray(c.ports)) for (const p of c.ports) if (isJsonObject(p)) p.protocol ??= 'TCP';
    }
  }
}

export function validatePodSpec(spec: JsonObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [required(`${path}.containers`)];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const item = obj(c);
    if (typeof item.name !== 'string' || item.name === '') errors.push(required(`${path}.containers[${i}].name`));
    else {
      errors.push(...validateName(item.name, 'label', `${path}.containers[${i}].name`));
      if (names.has(item.name))
        errors.push({ type: 'FieldValueDuplicate', field: `${path}.containers[${i}].name`, message: `Duplicate value: "${item.name}"` });
      names.add(item.name);
    }
    if (typeof item.image !== 'string' || item.image === '') errors.push(required(`${path}.containers[${i}].image`));
  });
  const policy = spec.restartPolicy;
  if (policy !== undefined && !['Always', 'OnFailure', 'Never'].includes(String(policy))) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: `${path}.restartPolicy`,
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Always", "OnFailure", "Never"`,
    });
  }
  return errors;
}

function podReady(o: KubeObject): string {
  const statuses = obj(o.status).containerStatuses;
  const total = Array.isArray(obj(o.spec).containers) ? (obj(o.spec).containers as unknown[]).length : 0;
  const ready = Array.isArray(statuses) ? statuses.filter((s) => obj(s).ready === true).length : 0;
  return `${ready}/${total}`;
}

function podRestarts(o: KubeObject): number {
  const statuses = obj(o.status).containerStatuses;
  return Array.isArray(statuses) ? statuses.reduce((n: number, s) => n + Number(obj(s).restartCount ?? 0), 0) : 0;
}

export const podType: BuiltinType = define({
  group: '',
  version: 'v1',
  plural: 'pods',
  kind: 'Pod',
  shortNames: ['po'],
  statusSubresource: true,
  categories: ['all'],
  extraSubresources: ['binding'],
  fieldSelectors: {
    'spec.nodeName': (o) => String(obj(o.spec).nodeName ?? ''),
    'spec.restartPolicy': (o) => String(obj(o.spec).restartPolicy ?? ''),
    'spec.schedulerName': (o) => String(obj(o.spec).schedulerName ?? ''),
    'spec.serviceAccountName': (o) => String(obj(o.spec).serviceAccountName ?? ''),
    'status.phase': (o) => String(obj(o.status).phase ?? ''),
    'status.podIP': (o) => String(obj(o.status).podIP ?? ''),
    'status.nominatedNodeName': (o) => String(obj(o.status).nominatedNodeName ?? ''),
  },
  columns: [
    computedColumn(podReady),
    computedColumn((o) => (o.metadata.deletionTimestamp ? 'Terminating' : String(obj(o.status).phase ?? 'Pending')), 'Status'),
    computedColumn(podRestarts, 'Restarts'),
  ],
  wideColumns: [computedColumn((o) => String(obj(o.status).podIP ?? '<none>'), 'IP'), computedColumn((o) => String(obj(o.spec).nodeName ?? '<none>'), 'Node')],
  defaults: (o) => {
    defaultPodSpec(specOf(o));
    if (!isJsonObject(o.status) || !o.status.phase) o.status = { ...obj(o.status), phase: 'Pending', qosClass: 'BestEffort' };
  },
  validate: (o, old) => {
    const errors = validatePodSpec(specOf(o), 'spec');
    if (old) {
      const oldSpec = obj(old.spec);
      const spec = specOf(o);
      // Pod specs are immutable apart from images and a few fields.
      const strip = (s: JsonObject): unknown => ({
        ...s,
        containers: Array.isArray(s.containers) ? s.containers.map((c) => ({ ...obj(c), image: undefined })) : s.containers,
        activeDeadlineSeconds: undefined,
        tolerations: undefined,
        terminationGracePeriodSeconds: undefined,
      });
      if (!jsonEqual(JSON.parse(JSON.stringify(strip(spec))), JSON.parse(JSON.stringify(strip(oldSpec))))) {
        errors.push(
          forbidden(
            'spec',
            'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
          ),
        );
      }
    }
    return errors;
  },
});
