/** Core (v1) kinds other than Pod: namespaces, config, services, events, volumes, nodes. */
import { badRequest, forbidden, invalidValue, required, type FieldError } from '../../errors.js';
import { isJsonObject, jsonEqual, type KubeObject } from '../../types.js';
import { computedColumn, define, obj, specOf, type BuiltinType } from './define.js';
import { validateEvent } from './events.js';
import { decodeClaim, validateClaim } from './claims.js';
import { assignDefaultClass, checkClaimResize, storageClassType } from './storage-classes.js';

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
    throw badRequest(
      `${o.kind} in version "${o.apiVersion}" cannot be handled as a ${o.kind}: json: cannot unmarshal into Go struct field ${o.kind}.${field} of type string`,
    );
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

export const coreTypes: BuiltinType[] = [
  define({
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    statusSubresource: true,
    nameRule: 'label',
    extraSubresources: ['finalize'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }],
    prepareCreate: (o) => {
      // As on a real server, every new namespace carries the `kubernetes` finalizer.
      const spec = specOf(o);
      const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as unknown[]) : [];
      spec.finalizers = finalizers.includes('kubernetes') ? finalizers : [...finalizers, 'kubernetes'];
    },
    defaults: (o) => {
      o.status = { phase: o.metadata.deletionTimestamp ? 'Terminating' : 'Active', ...obj(o.status) };
      o.metadata.labels = { ...(o.metadata.labels ?? {}), 'kubernetes.io/metadata.name': o.metadata.name as string };
    },
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    shortNames: ['cm'],
    allowCreateOnUpdate: false,
    columns: [computedColumn((o) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length, 'Data')],
    decode: (o) => decodeStringMap(o, 'data'),
    validate: validateImmutableData,
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'secrets',
    kind: 'Secret',
    columns: [{ name: 'Type', type: 'string', jsonPath: '.type' }, computedColumn((o) => Object.keys(obj(o.data)).length, 'Data')],
    decode: decodeSecret,
    defaults: (o) => {
      o.type ??= 'Opaque';
    },
    validate: (o, old) => [...validateImmutableData(o, old), ...(old && old.type !== o.type ? [invalidValue('type', o.type, 'field is immutable')] : [])],
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'services',
    kind: 'Service',
    shortNames: ['svc'],
    statusSubresource: true,
    nameRule: 'label',
    categories: ['all'],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
      computedColumn(() => '<none>', 'External-IP'),
      computedColumn(servicePorts, 'Port(s)'),
    ],
    wideColumns: [
      computedColumn((o) => {
        const selector = obj(obj(o.spec).selector);
        const terms = Object.entries(selector).map(([k, v]) => `${k}=${String(v)}`);
        return terms.length ? terms.join(',') : '<none>';
      }, 'Selector'),
    ],
    defaults: (o) => {
      const spec = specOf(o);
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      spec.internalTrafficPolicy ??= 'Cluster';
      if (Array.isArray(spec.ports))
        for (const p of spec.ports)
          if (isJsonObject(p)) {
            p.protocol ??= 'TCP';
            p.targetPort ??= p.port;
          }
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
        if (typeof port !== 'number' || port < 1 || port > 65535)
          errors.push(invalidValue(`spec.ports[${i}].port`, port ?? 0, 'must be between 1 and 65535, inclusive'));
        if (ports.length > 1 && !obj(p).name) errors.push(required(`spec.ports[${i}].name`));
      });
      if (old && obj(old.spec).clusterIP && obj(old.spec).clusterIP !== spec.clusterIP)
        errors.push(invalidValue('spec.clusterIP', spec.clusterIP ?? '', 'field is immutable'));
      return errors;
    },
  }),
  define({ group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', singular: 'endpoints', shortNames: ['ep'], allowCreateOnUpdate: true }),
  define({
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    shortNames: ['ev'],
    allowCreateOnUpdate: true,
    validate: validateEvent,
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
      computedColumn((o) => `${String(obj(o.involvedObject).kind ?? '').toLowerCase()}/${obj(o.involvedObject).name ?? ''}`, 'Object'),
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  }),
];

export const storageAndNodeTypes: BuiltinType[] = [
  define({
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    shortNames: ['pvc'],
    statusSubresource: true,
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase' },
      { name: 'Volume', type: 'string', jsonPath: '.spec.volumeName' },
    ],
    defaults: (o) => {
      specOf(o).volumeMode ??= 'Filesystem';
      if (!isJsonObject(o.status) || !o.status.phase) o.status = { ...obj(o.status), phase: 'Pending' };
    },
    decode: decodeClaim,
    validate: validateClaim,
    admission: { onCreate: assignDefaultClass, onUpdate: checkClaimResize },
  }),
  storageClassType,
  define({ group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'], statusSubresource: true }),
  define({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', shortNames: ['sa'] }),
  define({
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    statusSubresource: true,
    columns: [
      computedColumn((o) => {
        const conditions = obj(o.status).conditions;
        const ready = Array.isArray(conditions) ? conditions.find((c) => obj(c).type === 'Ready') : undefined;
        return ready && obj(ready).status === 'True' ? 'Ready' : 'NotReady';
      }, 'Status'),
    ],
  }),
];
