/** Built-in kinds Keelson and its stand-in controllers use, with the defaults and checks that matter. */
import { badRequest, forbidden, invalidValue, required, type FieldError } from './errors.js';
import type { PrinterColumn, ResourceType } from './resources.js';
import { formatLabelSelector, parseLabelSelector, type LabelSelectorObject } from './selectors.js';
import { isJsonObject, jsonEqual, type JsonObject, type KubeObject } from './types.js';
import { dropUnknownFields, modelName } from './known-fields.js';
import { decodeMicroTime, validateName, type NameRule } from './validation.js';

type Spec = Partial<ResourceType> & Pick<ResourceType, 'group' | 'version' | 'plural' | 'kind'> & { nameRule?: NameRule };

function define(spec: Spec): ResourceType & { nameRule: NameRule } {
  const model = modelName(spec.kind);
  const ownDecode = spec.decode;
  return {
    singular: spec.kind.toLowerCase(),
    namespaced: true,
    statusSubresource: false,
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    nameRule: 'subdomain',
    ...spec,
    decode: (o, old) => {
      ownDecode?.(o, old);
      // Unknown fields vanish as in Go decoding; admit() turns them into a 400 under Strict.
      if (model) (o as { __strict?: string[] }).__strict = dropUnknownFields(o, model).map((p) => `unknown field "${p}"`);
    },
  };
}

function obj(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {};
}

function specOf(o: KubeObject): JsonObject {
  if (!isJsonObject(o.spec)) o.spec = {};
  return o.spec as JsonObject;
}

function defaultPodSpec(spec: JsonObject): void {
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

function validatePodSpec(spec: JsonObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [required(`${path}.containers`)];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const item = obj(c);
    if (typeof item.name !== 'string' || item.name === '') errors.push(required(`${path}.containers[${i}].name`));
    else {
      errors.push(...validateName(item.name, 'label', `${path}.containers[${i}].name`));
      if (names.has(item.name)) errors.push({ type: 'FieldValueDuplicate', field: `${path}.containers[${i}].name`, message: `Duplicate value: "${item.name}"` });
      names.add(item.name);
    }
    if (typeof item.image !== 'string' || item.image === '') errors.push(required(`${path}.containers[${i}].image`));
  });
  const policy = spec.restartPolicy;
  if (policy !== undefined && !['Always', 'OnFailure', 'Never'].includes(String(policy))) {
    errors.push({ type: 'FieldValueNotSupported', field: `${path}.restartPolicy`, message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Always", "OnFailure", "Never"` });
  }
  return errors;
}

/** Workload checks shared by Deployment, StatefulSet and ReplicaSet. */
function validateWorkload(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = specOf(o);
  const errors: FieldError[] = [];
  const selector = isJsonObject(spec.selector) ? (spec.selector as LabelSelectorObject) : undefined;
  if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
    errors.push(required('spec.selector'));
  } else {
    const template = obj(spec.template);
    const labels = obj(template.metadata).labels as Record<string, string> | undefined;
    if (!parseLabelSelector(formatLabelSelector(selector))(labels)) {
      errors.push(invalidValue('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
    }
    if (old && !jsonEqual(obj(old.spec).selector, selector)) errors.push(invalidValue('spec.selector', selector, 'field is immutable'));
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) errors.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  errors.push(...validatePodSpec(obj(obj(spec.template).spec), 'spec.template.spec'));
  return errors;
}

function defaultTemplate(o: KubeObject): void {
  const template = obj(specOf(o).template);
  if (isJsonObject(template.spec)) defaultPodSpec(template.spec);
}

const readyColumn = (value: (o: KubeObject) => unknown, name = 'Ready'): PrinterColumn & { value: (o: KubeObject) => unknown } => ({ name, type: 'string', jsonPath: '', value });

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

function servicePorts(o: KubeObject): string {
  const ports = obj(o.spec).ports;
  if (!Array.isArray(ports) || ports.length === 0) return '<none>';
  return ports.map((p) => `${obj(p).port}/${obj(p).protocol ?? 'TCP'}`).join(',');
}

function decodeSecret(o: KubeObject): void {
  const data = o.data;
  if (data !== undefined && data !== null) {
    if (!isJsonObject(data)) throw badRequest(`Secret in version "v1" cannot be handled as a Secret: data must be a map`);
    for (const [k, v] of Object.entries(data)) {
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) {
        throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0 (key ${k})`);
      }
    }
  }
  // stringData is write-only: folded into data, as the real server does.
  if (isJsonObject(o.stringData)) {
    const merged = obj(o.data);
    for (const [k, v] of Object.entries(o.stringData)) merged[k] = Buffer.from(String(v)).toString('base64');
    o.data = merged;
  }
  delete o.stringData;
}

function decodeStringMap(o: KubeObject, field: string): void {
  const value = o[field];
  if (value === undefined || value === null) return;
  if (!isJsonObject(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw badRequest(`${o.kind} in version "${o.apiVersion}" cannot be handled as a ${o.kind}: json: cannot unmarshal into Go struct field ${o.kind}.${field} of type string`);
  }
}

/** ConfigMaps and Secrets marked `immutable: true` keep their data (and the flag) forever. */
function validateImmutableData(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!old || old.immutable !== true) return [];
  const errors: FieldError[] = [];
  if (o.immutable !== true) errors.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  if (!jsonEqual(o.data, old.data)) errors.push(forbidden('data', 'field is immutable when `immutable` is set'));
  if (!jsonEqual(o.binaryData, old.binaryData)) errors.push(forbidden('binaryData', 'field is immutable when `immutable` is set'));
  return errors;
}

export type BuiltinType = ReturnType<typeof define>;

export const builtinTypes: BuiltinType[] = [
  define({
    group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], statusSubresource: true, nameRule: 'label',
    extraSubresources: ['finalize'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }],
    defaults: (o) => {
      const spec = specOf(o);
      spec.finalizers ??= ['kubernetes'];
      o.status = { phase: o.metadata.deletionTimestamp ? 'Terminating' : 'Active', ...obj(o.status) };
      o.metadata.labels = { ...(o.metadata.labels ?? {}), 'kubernetes.io/metadata.name': o.metadata.name as string };
    },
  }),
  define({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', shortNames: ['cm'], allowCreateOnUpdate: false,
    columns: [readyColumn((o) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length, 'Data')],
    decode: (o) => decodeStringMap(o, 'data'), validate: validateImmutableData }),
  define({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret',
    columns: [{ name: 'Type', type: 'string', jsonPath: '.type' }, readyColumn((o) => Object.keys(obj(o.data)).length, 'Data')],
    decode: decodeSecret, defaults: (o) => { o.type ??= 'Opaque'; },
    validate: (o, old) => [...validateImmutableData(o, old), ...(old && old.type !== o.type ? [invalidValue('type', o.type, 'field is immutable')] : [])] }),
  define({
    group: '', version: 'v1', plural: 'services', kind: 'Service', shortNames: ['svc'], statusSubresource: true, nameRule: 'label', categories: ['all'],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
      readyColumn(() => '<none>', 'External-IP'),
      readyColumn(servicePorts, 'Port(s)'),
    ],
    defaults: (o) => {
      const spec = specOf(o);
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      spec.internalTrafficPolicy ??= 'Cluster';
      if (Array.isArray(spec.ports)) for (const p of spec.ports) if (isJsonObject(p)) { p.protocol ??= 'TCP'; p.targetPort ??= p.port; }
      o.status ??= { loadBalancer: {} };
    },
    prepareUpdate: (o, old) => {
      const spec = specOf(o);
      const before = obj(old.spec);
      if (!spec.clusterIP && before.clusterIP) {
        spec.clusterIP = before.clusterIP;
        spec.clusterIPs = before.clusterIPs;
      }
    },
    validate: (o, old) => {
      const spec = specOf(o);
      const errors: FieldError[] = [];
      const ports = Array.isArray(spec.ports) ? spec.ports : [];
      if (ports.length === 0 && spec.clusterIP !== 'None' && spec.type !== 'ExternalName') errors.push(required('spec.ports'));
      ports.forEach((p, i) => {
        const port = obj(p).port;
        if (typeof port !== 'number' || port < 1 || port > 65535) errors.push(invalidValue(`spec.ports[${i}].port`, port ?? 0, 'must be between 1 and 65535, inclusive'));
        if (ports.length > 1 && !obj(p).name) errors.push(required(`spec.ports[${i}].name`));
      });
      if (old && obj(old.spec).clusterIP && obj(old.spec).clusterIP !== spec.clusterIP) errors.push(invalidValue('spec.clusterIP', spec.clusterIP ?? '', 'field is immutable'));
      return errors;
    },
  }),
  define({ group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', singular: 'endpoints', shortNames: ['ep'], allowCreateOnUpdate: true }),
  define({
    group: '', version: 'v1', plural: 'events', kind: 'Event', shortNames: ['ev'], allowCreateOnUpdate: true,
    fieldSelectors: {
      'involvedObject.kind': (o) => String(obj(o.involvedObject).kind ?? ''),
      'involvedObject.namespace': (o) => String(obj(o.involvedObject).namespace ?? ''),
      'involvedObject.name': (o) => String(obj(o.involvedObject).name ?? ''),
      'involvedObject.uid': (o) => String(obj(o.involvedObject).uid ?? ''),
      'involvedObject.apiVersion': (o) => String(obj(o.involvedObject).apiVersion ?? ''),
      'involvedObject.resourceVersion': (o) => String(obj(o.involvedObject).resourceVersion ?? ''),
      'involvedObject.fieldPath': (o) => String(obj(o.involvedObject).fieldPath ?? ''),
      reason: (o) => String(o.reason ?? ''),
      type: (o) => String(o.type ?? ''),
      source: (o) => String(obj(o.source).component ?? ''),
      reportingComponent: (o) => String(o.reportingComponent ?? ''),
    },
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      readyColumn((o) => `${String(obj(o.involvedObject).kind ?? '').toLowerCase()}/${obj(o.involvedObject).name ?? ''}`, 'Object'),
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  }),
  define({
    group: '', version: 'v1', plural: 'pods', kind: 'Pod', shortNames: ['po'], statusSubresource: true, categories: ['all'], extraSubresources: ['binding'],
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
      readyColumn(podReady),
      readyColumn((o) => (o.metadata.deletionTimestamp ? 'Terminating' : String(obj(o.status).phase ?? 'Pending')), 'Status'),
      readyColumn(podRestarts, 'Restarts'),
    ],
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
        const strip = (s: JsonObject): unknown => ({ ...s, containers: Array.isArray(s.containers) ? s.containers.map((c) => ({ ...obj(c), image: undefined })) : s.containers, activeDeadlineSeconds: undefined, tolerations: undefined, terminationGracePeriodSeconds: undefined });
        if (!jsonEqual(JSON.parse(JSON.stringify(strip(spec))), JSON.parse(JSON.stringify(strip(oldSpec))))) {
          errors.push(forbidden('spec', 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'));
        }
      }
      return errors;
    },
  }),
  define({ group: '', version: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', shortNames: ['pvc'], statusSubresource: true,
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, { name: 'Volume', type: 'string', jsonPath: '.spec.volumeName' }],
    defaults: (o) => { specOf(o).volumeMode ??= 'Filesystem'; if (!isJsonObject(o.status) || !o.status.phase) o.status = { ...obj(o.status), phase: 'Pending' }; } }),
  define({ group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'], statusSubresource: true }),
  define({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', shortNames: ['sa'] }),
  define({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], statusSubresource: true,
    columns: [readyColumn((o) => {
      const conditions = obj(o.status).conditions;
      const ready = Array.isArray(conditions) ? conditions.find((c) => obj(c).type === 'Ready') : undefined;
      return ready && obj(ready).status === 'True' ? 'Ready' : 'NotReady';
    }, 'Status')] }),
  define({
    group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', shortNames: ['deploy'], statusSubresource: true, tracksGeneration: true, categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    columns: [
      readyColumn((o) => `${obj(o.status).readyReplicas ?? 0}/${obj(o.spec).replicas ?? 0}`),
      readyColumn((o) => obj(o.status).updatedReplicas ?? 0, 'Up-to-date'),
      readyColumn((o) => obj(o.status).availableReplicas ?? 0, 'Available'),
    ],
    defaults: (o) => {
      const spec = specOf(o);
      spec.replicas ??= 1;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      defaultTemplate(o);
    },
    validate: validateWorkload,
  }),
  define({
    group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', shortNames: ['sts'], statusSubresource: true, tracksGeneration: true, categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    columns: [readyColumn((o) => `${obj(o.status).readyReplicas ?? 0}/${obj(o.spec).replicas ?? 0}`)],
    defaults: (o) => {
      const spec = specOf(o);
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
      spec.revisionHistoryLimit ??= 10;
      spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
      defaultTemplate(o);
    },
    validate: (o, old) => {
      const errors = validateWorkload(o, old);
      if (old) {
        const allowed = ['replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds', 'ordinals', 'revisionHistoryLimit'];
        const strip = (s: JsonObject): JsonObject => Object.fromEntries(Object.entries(s).filter(([k]) => !allowed.includes(k)));
        if (!jsonEqual(strip(specOf(o)), strip(obj(old.spec)))) {
          errors.push(forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
        }
      }
      return errors;
    },
  }),
  define({
    group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', shortNames: ['rs'], statusSubresource: true, tracksGeneration: true, categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    defaults: (o) => { specOf(o).replicas ??= 1; defaultTemplate(o); },
    validate: validateWorkload,
  }),
  define({ group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision' }),
  define({
    group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', allowCreateOnUpdate: true,
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
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', nameRule: 'path',
    validate: (o) => (isJsonObject(o.roleRef) && o.roleRef.name ? [] : [required('roleRef.name')]) }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false, nameRule: 'path' }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, nameRule: 'path',
    validate: (o) => (isJsonObject(o.roleRef) && o.roleRef.name ? [] : [required('roleRef.name')]) }),
  define({
    group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', shortNames: ['pdb'], statusSubresource: true, tracksGeneration: true,
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

/** Name rule of a built-in type (custom resources use DNS subdomains). */
export function nameRuleOf(type: ResourceType): NameRule {
  return (type as Partial<BuiltinType>).nameRule ?? 'subdomain';
}

/** Built-in printer columns may compute a cell from the object. */
export type ComputedColumn = PrinterColumn & { value?: (o: KubeObject) => unknown };
