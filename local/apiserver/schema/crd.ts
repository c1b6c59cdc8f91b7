/**
 * CustomResourceDefinitions: validating CRD writes, serving their resources (per served version)
 * with schema validation, defaulting and pruning, and cleaning up custom resources on CRD deletion.
 */
import type { Logger } from '../../../lib/log.js';
import { typeKeyOf, type ApiCore } from '../api.js';
import { forbidden, invalidValue, required, type FieldError } from '../errors.js';
import { checkJsonPath } from './jsonpath.js';
import { dropUnknownFields } from './known-fields.js';
import type { PrinterColumn, ResourceType } from './resources.js';
import { admitCustomResource, checkStructural, type Schema } from './schema.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../types.js';
import { nowTime, validateName } from '../writes/validation.js';

export const crdFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: { status?: JsonObject; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: PrinterColumn[];
}

interface CrdSpec {
  group: string;
  scope: 'Namespaced' | 'Cluster';
  names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  versions: CrdVersion[];
}

function specOf(o: KubeObject): CrdSpec {
  return (isJsonObject(o.spec) ? o.spec : {}) as unknown as CrdSpec;
}

function validateCrd(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = specOf(o);
  const errors: FieldError[] = [];
  if (!spec.group) errors.push(required('spec.group'));
  else errors.push(...validateName(spec.group, 'subdomain', 'spec.group'));
  if (!isJsonObject(spec.names)) return [...errors, required('spec.names')];
  if (!spec.names.plural) errors.push(required('spec.names.plural'));
  else errors.push(...validateName(spec.names.plural, 'label', 'spec.names.plural'));
  if (!spec.names.kind) errors.push(required('spec.names.kind'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      message: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
    });
  if (spec.group && spec.names.plural && o.metadata.name !== `${spec.names.plural}.${spec.group}`) {
    errors.push(invalidValue('metadata.name', o.metadata.name, `must be spec.names.plural+"."+spec.group`));
  }
  if (!Array.isArray(spec.versions) || spec.versions.length === 0)
    return [...errors, required('spec.versions', 'must have exactly one version marked as storage version')];
  if (spec.versions.filter((v) => v.storage).length !== 1)
    errors.push(
      invalidValue(
        'spec.versions',
        spec.versions.map((v) => v.name),
        'must have exactly one version marked as storage version',
      ),
    );
  spec.versions.forEach((v, i) => {
    const path = `spec.versions[${i}]`;
    if (!v.name || !/^v\d+((alpha|beta)\d+)?$/.test(v.name))
      errors.push(invalidValue(`${path}.name`, v.name ?? '', 'a DNS-1035 label must consist of lower case alphanumeric characters'));
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) errors.push(required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
    else errors.push(...checkStructural(schema, `${path}.schema.openAPIV3Schema`));
    for (const [j, c] of (v.additionalPrinterColumns ?? []).entries()) {
      try {
        checkJsonPath(c.jsonPath);
      } catch {
        errors.push(invalidValue(`${path}.additionalPrinterColumns[${j}].JSONPath`, c.jsonPath, 'must be a simple json path'));
      }
    }
    const scale = v.subresources?.scale;
    if (scale && (!scale.specReplicasPath || !scale.statusReplicasPath)) errors.push(required(`${path}.subresources.scale.specReplicasPath`));
  });
  const conversion = (spec as unknown as JsonObject).conversion;
  if (isJsonObject(conversion) && conversion.strategy !== undefined && conversion.strategy !== 'None') {
    // Serving objects without the webhook would hand out unconverted data: refuse clearly instead.
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'spec.conversion.strategy',
      message: `Unsupported value: ${JSON.stringify(conversion.strategy)}: supported values: "None" (conversion webhooks are not supported by the Keelson local API server)`,
    });
  }
  if (old) {
    const before = specOf(old);
    if (before.group !== spec.group) errors.push(invalidValue('spec.group', spec.group, 'field is immutable'));
    if (before.scope !== spec.scope) errors.push(invalidValue('spec.scope', spec.scope, 'field is immutable'));
    if (before.names?.plural !== spec.names.plural) errors.push(forbidden('spec.names.plural', 'field is immutable'));
  }
  return errors;
}

export const crdType: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  kind: 'CustomResourceDefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  statusSubresource: true,
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  columns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  customColumns: true,
  defaults: (o) => {
    const spec = specOf(o);
    if (isJsonObject(spec.names)) {
      spec.names.singular ??= spec.names.kind?.toLowerCase();
      spec.names.listKind ??= `${spec.names.kind}List`;
    }
    (spec as unknown as JsonObject).conversion ??= { strategy: 'None' };
    // The cleanup finalizer makes deletion wait until custom resources are gone.
    if (!o.metadata.deletionTimestamp) {
      const finalizers = o.metadata.finalizers ?? [];
      if (!finalizers.includes(crdFinalizer)) o.metadata.finalizers = [...finalizers, crdFinalizer];
    }
  },
  decode: (o) => {
    (o as { __strict?: string[] }).__strict = dropUnknownFields(o, 'V1CustomResourceDefinition').map((p) => `unknown field "${p}"`);
  },
  validate: validateCrd,
};

/** Resource types a CRD serves, one per served version. */
export function typesOf(crd: KubeObject): ResourceType[] {
  const spec = specOf(crd);
  return spec.versions
    .filter((v) => v.served)
    .map((v) => {
      const schema = v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      const type: ResourceType = {
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
        kind: spec.names.kind,
        namespaced: spec.scope === 'Namespaced',
        shortNames: spec.names.shortNames,
        categories: spec.names.categories,
        statusSubresource: v.subresources?.status !== undefined,
        scale: v.subresources?.scale,
        tracksGeneration: true,
        allowCreateOnUpdate: false,
        allowUnconditionalUpdate: false,
        crdName: crd.metadata.name,
        openApiSchema: schema as Record<string, unknown>,
        columns: v.additionalPrinterColumns?.map((c) => ({ ...c, type: c.type ?? 'string' })),
        customColumns: (v.additionalPrinterColumns ?? []).length > 0,
      };
      type.decode = (o, old) => admitCustomResource(o, schema, type.statusSubresource, old);
      return type;
    });
}

function crdStatus(crd: KubeObject): JsonObject {
  const spec = specOf(crd);
  const now = nowTime();
  return {
    conditions: [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ],
    acceptedNames: {
      plural: spec.names.plural,
      singular: spec.names.singular,
      kind: spec.names.kind,
      listKind: spec.names.listKind,
      shortNames: spec.names.shortNames,
      categories: spec.names.categories,
    },
    storedVersions: [
      ...new Set([
        ...(isJsonObject(crd.status) && Array.isArray(crd.status.storedVersions) ? (crd.status.storedVersions as string[]) : []),
        ...spec.versions.filter((v) => v.storage).map((v) => v.name),
      ]),
    ],
  };
}

function register(core: ApiCore, crd: KubeObject, previous?: KubeObject): void {
  const next = typesOf(crd);
  const served = (t: ResourceType): boolean => core.registry.get(t.group, t.version, t.plural) !== undefined;
  // Status-only writes change nothing served (and must not disturb watches or OpenAPI hashes).
  if (previous && JSON.stringify(previous.spec) === JSON.stringify(crd.spec) && next.every(served)) return;
  const kept = new Set(next.map((t) => `${t.group}/${t.version}/${t.plural}`));
  if (previous) for (const t of typesOf(previous)) if (!kept.has(`${t.group}/${t.version}/${t.plural}`)) core.registry.remove(t.group, t.version, t.plural);
  for (const t of next) core.registry.add(t);
}

/** Serves the resources of CRDs already in the store (after loading a state file). */
export function registerStoredCrds(core: ApiCore): void {
  for (const crd of core.store.list(typeKeyOf(crdType))) register(core, crd);
}

/**
 * Keeps the registry in step with CRD objects: establishes new ones (status), re-registers on
 * change, removes custom resources when a CRD is being deleted, then its paths.
 */
export function watchCrds(core: ApiCore, logger?: Logger): () => void {
  const key = typeKeyOf(crdType);
  let pending = false;
  const reconcile = (): void => {
    pending = false;
    for (const crd of core.store.list(key)) {
      if (crd.metadata.deletionTimestamp) {
        const [first] = typesOf(crd);
        if (first) {
          for (const o of core.store.list(typeKeyOf(first))) core.store.remove(typeKeyOf(first), o.metadata.namespace, o.metadata.name as string);
          for (const t of typesOf(crd)) core.registry.remove(t.group, t.version, t.plural);
          core.store.dropType(typeKeyOf(first));
        }
        const finalizers = (crd.metadata.finalizers ?? []).filter((f) => f !== crdFinalizer);
        core.patch(crdType, undefined, crd.metadata.name as string, 'merge', { metadata: { finalizers: finalizers.length ? finalizers : null } });
        continue;
      }
      const status = crdStatus(crd);
      const current = isJsonObject(crd.status) ? crd.status : {};
      if (
        JSON.stringify(current.acceptedNames) !== JSON.stringify(status.acceptedNames) ||
        JSON.stringify(current.storedVersions) !== JSON.stringify(status.storedVersions)
      ) {
        core.update(crdType, undefined, crd.metadata.name as string, { ...crd, status }, 'status');
      }
    }
  };
  const unsubscribe = core.store.subscribe((event) => {
    if (event.typeKey !== key) return;
    // Paths appear synchronously with the write so a client can use them right after the 201.
    if (event.type !== 'DELETED' && !event.object.metadata.deletionTimestamp) register(core, event.object, event.previous);
    if (event.type === 'DELETED') for (const t of typesOf(event.object)) core.registry.remove(t.group, t.version, t.plural);
    if (!pending) {
      pending = true;
      setImmediate(() => {
        try {
          reconcile();
        } catch (err) {
          // A failed pass must not take the server down; the next CRD event retries.
          logger?.error({ err }, 'CRD reconcile failed');
        }
      });
    }
  });
  return unsubscribe;
}
