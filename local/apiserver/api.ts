/**
 * The verbs on resources (create, get, list, update, patch, delete) with the semantics of a real
 * server: resourceVersion preconditions, generation, status subresource, finalizers and graceful
 * deletion. HTTP concerns live in handler.ts; this module works on JSON objects only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { admit, applyBody, checkNamespace, checkNamespaceWritable, checkPatchedName, decodeBody } from './writes/admission.js';
import { applyServerSideApply } from './writes/apply.js';
import { ApiError, alreadyExists, badRequest, forbidden, invalid, notFound, required, unsupportedMediaType } from './errors.js';
import {
  patchContentTypes,
  typeKeyOf,
  type DeleteOptions,
  type DeleteResult,
  type ListQuery,
  type ListResult,
  type PatchType,
  type WriteOptions,
} from './api-types.js';
import { deleteObject } from './writes/deletion.js';
import { recordManager } from './writes/managed-fields.js';
import { decodeContinue, encodeContinue, keyOf } from './storage/paging.js';
import { applyJsonPatch, applyMergePatch, strategicMerge } from './writes/patch.js';
import { checkPatchPreconditions, checkUpdatePreconditions } from './writes/preconditions.js';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from './schema/resources.js';
import { parseFieldSelector, parseLabelSelector } from './storage/selectors.js';
import type { ObjectStore } from './storage/store.js';
import { clone, isJsonObject, jsonEqual, type JsonObject, type KubeObject } from './types.js';
import { nowTime } from './writes/validation.js';
import { ServiceIpAllocator } from './writes/service-ips.js';

export { patchContentTypes, typeKeyOf };
export type { DeleteOptions, DeleteResult, ListQuery, ListResult, PatchType, WriteOptions };

/** Everything but metadata, status and type fields: what `generation` tracks. */
function specPart(o: KubeObject): JsonObject {
  const rest: JsonObject = { ...o };
  delete rest.metadata;
  delete rest.status;
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

/** The object without the fields every write changes, to detect no-op writes. */
function comparable(o: KubeObject): JsonObject {
  const c = clone(o) as JsonObject;
  const meta = { ...(o.metadata as JsonObject) };
  delete meta.resourceVersion;
  delete meta.managedFields;
  c.metadata = meta;
  delete c.apiVersion;
  delete c.kind;
  return c;
}

const generateNameSuffix = 'bcdfghjklmnpqrstvwxz2456789';

export class ApiCore {
  private readonly serviceIps: ServiceIpAllocator;

  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
    serviceCidr?: string,
  ) {
    this.serviceIps = new ServiceIpAllocator(serviceCidr);
  }

  /** The object as a client of this version sees it. */
  output(type: ResourceType, o: KubeObject): KubeObject {
    return { ...o, apiVersion: apiVersionOf(type), kind: type.kind };
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const found = this.store.get(typeKeyOf(type), type.namespaced ? namespace : undefined, name);
    if (!found) throw notFound(type.plural, type.group, name);
    return this.output(type, found);
  }

  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.store.get(typeKeyOf(type), type.namespaced ? namespace : undefined, name);
    return found ? this.output(type, found) : undefined;
  }

  /** Returns a predicate for a list or watch, or a 400 for unsupported selectors. */
  matcher(type: ResourceType, labelSelector?: string, fieldSelector?: string): (o: KubeObject) => boolean {
    const labels = parseLabelSelector(labelSelector);
    const fields = parseFieldSelector(fieldSelector).map((req) => {
      let read: ((o: KubeObject) => string | undefined) | undefined;
      if (req.field === 'metadata.name') read = (o) => o.metadata.name;
      else if (req.field === 'metadata.namespace') read = (o) => o.metadata.namespace ?? '';
      else read = type.fieldSelectors?.[req.field];
      // A real server answers in the words of the kind's field label conversion: its own for kinds
      // with fields of their own (pods, events, ...), the generic metadata-only one for the rest.
      if (!read)
        throw badRequest(
          type.fieldSelectors
            ? `field label not supported: ${req.field}`
            : `"${req.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
        );
      const reader = read;
      return (o: KubeObject) => (reader(o) === req.value) !== req.negate;
    });
    return (o) => labels(o.metadata.labels) && fields.every((f) => f(o));
  }

  list(type: ResourceType, namespace: string | undefined, query: ListQuery): ListResult {
    const matches = this.matcher(type, query.labelSelector, query.fieldSelector);
    let items = this.store.list(typeKeyOf(type), type.namespaced ? namespace : undefined).filter(matches);
    let resourceVersion = String(this.store.currentRevision);
    if (query.continue) {
      const token = decodeContinue(query.continue);
      if (token.rv < this.store.oldestResumableRevision) {
        throw new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
      }
      items = items.filter((o) => keyOf(o) > token.start);
      resourceVersion = String(token.rv);
    }
    const result: ListResult = { items: items.map((o) => this.output(type, o)), resourceVersion };
    if (query.limit && query.limit > 0 && items.length > query.limit) {
      result.items = result.items.slice(0, query.limit);
      result.remainingItemCount = items.length - query.limit;
      result.continue = encodeContinue({ rv: Number(resourceVersion), start: keyOf(result.items[result.items.length - 1]) });
    }
    return result;
  }

  create(type: ResourceType, namespace: string | undefined, body: unknown, options: WriteOptions = {}): KubeObject {
    const o = decodeBody(this.registry, type, body);
    checkNamespace(type, namespace, o);
    if (!o.metadata.name) {
      if (o.metadata.generateName) o.metadata.name = o.metadata.generateName + randomName();
      else throw invalid(type.kind, type.group, '', [required('metadata.name', 'name or generateName is required')]);
    }
    const name = o.metadata.name;
    if (this.store.get(typeKeyOf(type), o.metadata.namespace, name)) throw alreadyExists(type.plural, type.group, name);
    checkNamespaceWritable(this.store, type, o.metadata.namespace, name);
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = nowTime();
    delete o.metadata.deletionTimestamp;
    delete o.metadata.deletionGracePeriodSeconds;
    delete o.metadata.resourceVersion;
    delete o.metadata.selfLink;
    if (type.tracksGeneration) o.metadata.generation = 1;
    else delete o.metadata.generation;
    if (type.statusSubresource && type.kind !== 'Node') delete o.status;
    type.prepareCreate?.(o);
    type.admission?.onCreate?.(o, this.store);
    admit(type, o, undefined, options);
    if (type.plural === 'services' && type.group === '')
      this.serviceIps.allocate(o, new Set(this.store.list('/services').map((s) => (isJsonObject(s.spec) ? s.spec.clusterIP : undefined))));
    recordManager(o, undefined, options.fieldManager, 'Update', apiVersionOf(type));
    if (options.dryRun) return this.output(type, o);
    return this.output(type, this.store.put(typeKeyOf(type), o));
  }

  /** PUT: replaces the object (or only its status); stale resourceVersion is a 409. */
  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    subresource?: string,
    options: WriteOptions = {},
  ): { object: KubeObject; created: boolean } {
    const incoming = decodeBody(this.registry, type, body);
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
    }
    incoming.metadata.name = name;
    const old = this.find(type, namespace, name);
    if (!old) {
      if (type.allowCreateOnUpdate && !subresource) return { object: this.create(type, namespace, incoming, options), created: true };
      throw notFound(type.plural, type.group, name);
    }
    checkUpdatePreconditions(type, old, incoming, name);
    return { object: this.commitUpdate(type, old, incoming, subresource, options, 'Update'), created: false };
  }

  patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    subresource?: string,
    options: WriteOptions = {},
  ): { object: KubeObject; created: boolean } {
    const old = this.find(type, namespace, name);
    if (patchType === 'strategic' && type.crdName) throw unsupportedMediaType('application/strategic-merge-patch+json');
    if (!old) {
      if (patchType !== 'apply' || subresource) throw notFound(type.plural, type.group, name);
      if (!options.fieldManager || options.explicitManager === false) throw badRequest('PATCH, application/apply-patch+yaml requires fieldManager to be set');
      const applied = applyServerSideApply(
        undefined,
        applyBody(this.registry, type, patch, name),
        options.fieldManager,
        Boolean(options.force),
        apiVersionOf(type),
      );
      return { object: this.create(type, namespace, applied, { ...options, fieldManager: undefined }), created: true };
    }
    let next: JsonObject;
    switch (patchType) {
      case 'json':
        next = applyJsonPatch(old, patch);
        break;
      case 'merge':
        if (!isJsonObject(patch)) throw badRequest('merge patch must be a JSON object');
        next = applyMergePatch(old, patch) as JsonObject;
        break;
      case 'strategic':
        if (!isJsonObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
        next = strategicMerge(old, patch);
        break;
      case 'apply':
        if (!options.fieldManager || options.explicitManager === false) throw badRequest('PATCH, application/apply-patch+yaml requires fieldManager to be set');
        next = applyServerSideApply(
          old,
          applyBody(this.registry, type, patch, name),
          options.fieldManager,
          Boolean(options.force),
          apiVersionOf(type),
          subresource,
        );
        break;
    }
    const candidate = checkPatchedName(type, next, name, namespace);
    checkPatchPreconditions(type, old, candidate, name);
    const operation = patchType === 'apply' ? 'Apply' : 'Update';
    return { object: this.commitUpdate(type, old, candidate, subresource, options, operation), created: false };
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): DeleteResult {
    return deleteObject(this, type, namespace, name, options);
  }

  /** pods/binding: sets spec.nodeName, which ordinary updates may not change. */
  bindUpdate(type: ResourceType, pod: KubeObject): KubeObject {
    return this.output(type, this.store.put(typeKeyOf(type), pod));
  }

  /** The shared tail of PUT and PATCH. */
  private commitUpdate(
    type: ResourceType,
    old: KubeObject,
    candidate: KubeObject,
    subresource: string | undefined,
    options: WriteOptions,
    operation: 'Apply' | 'Update',
  ): KubeObject {
    let next: KubeObject;
    if (subresource === 'status') {
      next = clone(old);
      if (candidate.status === undefined) delete next.status;
      else next.status = candidate.status;
      // Labels/annotations may ride along on a status write; the rest of metadata stays.
      if (isJsonObject(candidate.metadata)) {
        if (candidate.metadata.labels !== undefined) next.metadata.labels = candidate.metadata.labels;
        if (candidate.metadata.annotations !== undefined) next.metadata.annotations = candidate.metadata.annotations;
        // A server-side apply of status brings its own managedFields entry (subresource "status").
        if (candidate.metadata.managedFields !== undefined) next.metadata.managedFields = candidate.metadata.managedFields;
      }
    } else if (subresource === 'finalize') {
      next = clone(old);
      next.spec = { ...(isJsonObject(old.spec) ? old.spec : {}), finalizers: isJsonObject(candidate.spec) ? (candidate.spec.finalizers ?? []) : [] };
    } else if (subresource) {
      throw badRequest(`subresource ${subresource} does not support this verb`);
    } else {
      next = candidate;
      if (!isJsonObject(next.metadata)) next.metadata = {};
      if (type.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
      if (type.group === '' && type.plural === 'namespaces') {
        next.spec = { ...(isJsonObject(next.spec) ? next.spec : {}), finalizers: isJsonObject(old.spec) ? old.spec.finalizers : undefined };
      }
    }
    const meta = next.metadata;
    meta.name = old.metadata.name;
    meta.namespace = old.metadata.namespace;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    meta.deletionTimestamp = old.metadata.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    meta.generation = old.metadata.generation;
    meta.managedFields = meta.managedFields ?? old.metadata.managedFields;
    for (const key of Object.keys(meta)) if (meta[key] === undefined || meta[key] === null) delete meta[key];
    if (old.metadata.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
      if (added.length > 0)
        throw invalid(type.kind, type.group, old.metadata.name as string, [
          forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`),
        ]);
    }
    type.prepareUpdate?.(next, old);
    admit(type, next, old, options);
    if (!subresource) type.admission?.onUpdate?.(next, old, this.store);
    if (type.tracksGeneration && !jsonEqual(specPart(old), specPart(next))) meta.generation = (old.metadata.generation ?? 0) + 1;
    recordManager(next, old, options.fieldManager, operation, apiVersionOf(type), subresource);
    if (jsonEqual(comparable(old), comparable(next))) return old;
    if (options.dryRun) return this.output(type, next);
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && !this.waitsForNamespaceFinalizers(type, next)) {
      if (meta.deletionGracePeriodSeconds === undefined || meta.deletionGracePeriodSeconds === 0) {
        const key = typeKeyOf(type);
        this.store.put(key, next);
        return this.output(type, this.store.remove(key, meta.namespace, meta.name as string) as KubeObject);
      }
    }
    return this.output(type, this.store.put(typeKeyOf(type), next));
  }

  private waitsForNamespaceFinalizers(type: ResourceType, o: KubeObject): boolean {
    if (!(type.group === '' && type.plural === 'namespaces')) return false;
    const spec = isJsonObject(o.spec) ? o.spec : {};
    return Array.isArray(spec.finalizers) && spec.finalizers.length > 0;
  }
}

function randomName(): string {
  const bytes = randomBytes(5);
  return [...bytes].map((b) => generateNameSuffix[b % generateNameSuffix.length]).join('');
}
