/**
 * The verbs on resources (create, get, list, update, patch, delete) with the semantics of a real
 * server: resourceVersion preconditions, generation, status subresource, finalizers and graceful
 * deletion. HTTP concerns live in handler.ts; this module works on JSON objects only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { applyServerSideApply } from './apply.js';
import { nameRuleOf } from './builtins.js';
import { ApiError, alreadyExists, badRequest, conflict, forbidden, forbiddenRequest, invalid, notFound, required, unsupportedMediaType, type FieldError } from './errors.js';
import { recordManager } from './managed-fields.js';
import { applyJsonPatch, applyMergePatch, strategicMerge } from './patch.js';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ObjectStore } from './store.js';
import { clone, isJsonObject, jsonEqual, type JsonObject, type KubeObject } from './types.js';
import { decodeMetadata, nowTime, validateMetadata, validateName } from './validation.js';

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /** The client named the manager (apply requires it; other writes default it from the User-Agent). */
  explicitManager?: boolean;
  fieldValidation?: string;
  force?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteResult {
  /** The object as it is now (deletion pending) or as it was (removed). */
  object: KubeObject;
  removed: boolean;
}

export const patchContentTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

export function typeKeyOf(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}

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
  private serviceIpNext = 1;

  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
    private readonly serviceIpPrefix = '127.1.',
  ) {}

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
      if (!read) throw badRequest(`field label not supported: ${req.field}`);
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
        throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
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
    const o = this.decodeBody(type, body);
    this.checkNamespace(type, namespace, o);
    if (!o.metadata.name) {
      if (o.metadata.generateName) o.metadata.name = o.metadata.generateName + randomName();
      else throw invalid(type.kind, type.group, '', [required('metadata.name', 'name or generateName is required')]);
    }
    const name = o.metadata.name;
    if (this.store.get(typeKeyOf(type), o.metadata.namespace, name)) throw alreadyExists(type.plural, type.group, name);
    this.checkNamespaceWritable(type, o.metadata.namespace, name);
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = nowTime();
    delete o.metadata.deletionTimestamp;
    delete o.metadata.deletionGracePeriodSeconds;
    delete o.metadata.resourceVersion;
    delete o.metadata.selfLink;
    if (type.tracksGeneration) o.metadata.generation = 1;
    else delete o.metadata.generation;
    if (type.statusSubresource && type.kind !== 'Node') delete o.status;
    this.admit(type, o, undefined, options);
    if (type.plural === 'services' && type.group === '') this.allocateClusterIp(o);
    recordManager(o, undefined, options.fieldManager, 'Update', apiVersionOf(type));
    if (options.dryRun) return this.output(type, o);
    return this.output(type, this.store.put(typeKeyOf(type), o));
  }

  /** PUT: replaces the object (or only its status); stale resourceVersion is a 409. */
  update(type: ResourceType, namespace: string | undefined, name: string, body: unknown, subresource?: string, options: WriteOptions = {}): { object: KubeObject; created: boolean } {
    const incoming = this.decodeBody(type, body);
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
    }
    incoming.metadata.name = name;
    const old = this.find(type, namespace, name);
    if (!old) {
      if (type.allowCreateOnUpdate && !subresource) return { object: this.create(type, namespace, incoming, options), created: true };
      throw notFound(type.plural, type.group, name);
    }
    const rv = incoming.metadata.resourceVersion;
    if (!rv && type.crdName) {
      throw invalid(type.kind, type.group, name, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    if (rv && rv !== old.metadata.resourceVersion) throw conflict(type.plural, type.group, name);
    return { object: this.commitUpdate(type, old, incoming, subresource, options, 'Update'), created: false };
  }

  patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, subresource?: string, options: WriteOptions = {}): { object: KubeObject; created: boolean } {
    const old = this.find(type, namespace, name);
    if (patchType === 'strategic' && type.crdName) throw unsupportedMediaType('application/strategic-merge-patch+json');
    if (!old) {
      if (patchType !== 'apply' || subresource) throw notFound(type.plural, type.group, name);
      if (!options.fieldManager || options.explicitManager === false) throw badRequest('PATCH, application/apply-patch+yaml requires fieldManager to be set');
      const applied = applyServerSideApply(undefined, this.applyBody(type, patch, name), options.fieldManager, Boolean(options.force), apiVersionOf(type));
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
        next = applyServerSideApply(old, this.applyBody(type, patch, name), options.fieldManager, Boolean(options.force), apiVersionOf(type), subresource);
        break;
    }
    const candidate = next as KubeObject;
    if (!isJsonObject(candidate.metadata)) candidate.metadata = {};
    const rv = candidate.metadata.resourceVersion;
    if (rv !== undefined && rv !== old.metadata.resourceVersion) throw conflict(type.plural, type.group, name);
    if (candidate.metadata.name !== undefined && candidate.metadata.name !== name) {
      throw badRequest(`metadata.name: Invalid value: "${String(candidate.metadata.name)}": field is immutable`);
    }
    const operation = patchType === 'apply' ? 'Apply' : 'Update';
    return { object: this.commitUpdate(type, old, candidate, subresource, options, operation), created: false };
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): DeleteResult {
    const old = this.find(type, namespace, name);
    if (!old) throw notFound(type.plural, type.group, name);
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw conflict(type.plural, type.group, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(type.plural, type.group, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`);
    }
    const policy = options.propagationPolicy ?? (options.orphanDependents ? 'Orphan' : undefined);
    const next = clone(old);
    const finalizers = [...(next.metadata.finalizers ?? [])];
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    if (policy === 'Background') {
      const i = finalizers.indexOf('foregroundDeletion');
      if (i >= 0 && !old.metadata.finalizers?.includes('foregroundDeletion')) finalizers.splice(i, 1);
    }
    if (finalizers.length > 0) next.metadata.finalizers = finalizers;
    const isNamespace = type.group === '' && type.plural === 'namespaces';
    const graceSeconds = this.graceSeconds(type, old, options);
    const pending = finalizers.length > 0 || isNamespace || graceSeconds > 0;
    if (!pending) {
      if (options.dryRun) return { object: old, removed: true };
      const gone = this.store.remove(typeKeyOf(type), old.metadata.namespace, name) as KubeObject;
      return { object: this.output(type, gone), removed: true };
    }
    if (next.metadata.deletionTimestamp) {
      // Already being deleted: only a shorter grace period or new GC finalizers change anything.
      const shorter = graceSeconds < (old.metadata.deletionGracePeriodSeconds ?? 0);
      if (shorter) {
        next.metadata.deletionGracePeriodSeconds = graceSeconds;
        next.metadata.deletionTimestamp = nowTime(new Date(Date.now() + graceSeconds * 1000));
      }
      if (!shorter && jsonEqual(next.metadata.finalizers, old.metadata.finalizers)) return { object: old, removed: false };
      if (graceSeconds === 0 && finalizers.length === 0 && !isNamespace) {
        const gone = this.store.remove(typeKeyOf(type), old.metadata.namespace, name) as KubeObject;
        return { object: this.output(type, gone), removed: true };
      }
    } else {
      next.metadata.deletionTimestamp = nowTime(new Date(Date.now() + graceSeconds * 1000));
      next.metadata.deletionGracePeriodSeconds = graceSeconds;
      if (type.tracksGeneration) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
      if (isNamespace) next.status = { ...(isJsonObject(next.status) ? next.status : {}), phase: 'Terminating' };
    }
    if (options.dryRun) return { object: next, removed: false };
    return { object: this.output(type, this.store.put(typeKeyOf(type), next)), removed: false };
  }

  /** pods/binding: sets spec.nodeName, which ordinary updates may not change. */
  bindUpdate(type: ResourceType, pod: KubeObject): KubeObject {
    return this.output(type, this.store.put(typeKeyOf(type), pod));
  }

  /** Graceful deletion applies to pods bound to a node and not yet finished. */
  private graceSeconds(type: ResourceType, old: KubeObject, options: DeleteOptions): number {
    if (!(type.group === '' && type.plural === 'pods')) return 0;
    const spec = isJsonObject(old.spec) ? old.spec : {};
    const phase = isJsonObject(old.status) ? old.status.phase : undefined;
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const grace = options.gracePeriodSeconds ?? (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30);
    return Math.max(0, grace);
  }

  /** The shared tail of PUT and PATCH. */
  private commitUpdate(type: ResourceType, old: KubeObject, candidate: KubeObject, subresource: string | undefined, options: WriteOptions, operation: 'Apply' | 'Update'): KubeObject {
    let next: KubeObject;
    if (subresource === 'status') {
      next = clone(old);
      if (candidate.status === undefined) delete next.status;
      else next.status = candidate.status;
      // Labels/annotations may ride along on a status write; the rest of metadata stays.
      if (isJsonObject(candidate.metadata)) {
        if (candidate.metadata.labels !== undefined) next.metadata.labels = candidate.metadata.labels;
        if (candidate.metadata.annotations !== undefined) next.metadata.annotations = candidate.metadata.annotations;
      }
    } else if (subresource === 'finalize') {
      next = clone(old);
      next.spec = { ...(isJsonObject(old.spec) ? old.spec : {}), finalizers: isJsonObject(candidate.spec) ? candidate.spec.finalizers ?? [] : [] };
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
      if (added.length > 0) throw invalid(type.kind, type.group, old.metadata.name as string, [forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`)]);
    }
    type.prepareUpdate?.(next, old);
    this.admit(type, next, old, options);
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

  /** Type checks of the body: apiVersion/kind must match the URL, metadata must decode. */
  decodeBody(type: ResourceType, body: unknown): KubeObject {
    if (!isJsonObject(body)) throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: the body must be a JSON object`);
    const o = clone(body) as KubeObject;
    const apiVersion = apiVersionOf(type);
    if (o.apiVersion !== undefined && o.apiVersion !== apiVersion) {
      const other = typeof o.apiVersion === 'string' ? this.registry.byKind(o.apiVersion, String(o.kind)) : undefined;
      if (!other || other.group !== type.group || other.plural !== type.plural) {
        throw badRequest(`the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersion})`);
      }
    }
    if (o.kind !== undefined && o.kind !== type.kind) throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${String(o.kind)}: no kind "${String(o.kind)}" is registered for version "${apiVersion}"`);
    o.apiVersion = apiVersion;
    o.kind = type.kind;
    if (o.metadata === undefined || o.metadata === null) o.metadata = {};
    decodeMetadata(o);
    return o;
  }

  private applyBody(type: ResourceType, patch: unknown, name: string): KubeObject {
    const o = this.decodeBody(type, patch);
    if (o.metadata.name !== undefined && o.metadata.name !== name) throw badRequest(`the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`);
    o.metadata.name = name;
    return o;
  }

  /** Defaulting, decoding rules and validation, in the order a real server runs them. */
  private admit(type: ResourceType, o: KubeObject, old: KubeObject | undefined, options: WriteOptions): void {
    type.decode?.(o, old);
    type.defaults?.(o);
    const errors: FieldError[] = [];
    if (!old) errors.push(...validateName(o.metadata.name as string, nameRuleOf(type)));
    errors.push(...validateMetadata(o));
    errors.push(...(type.validate?.(o, old) ?? []));
    const strictErrors = (o as { __strict?: string[] }).__strict;
    if (strictErrors) {
      delete (o as { __strict?: string[] }).__strict;
      if (strictErrors.length > 0 && options.fieldValidation === 'Strict') {
        throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${strictErrors.join(', ')}`);
      }
    }
    if (errors.length > 0) throw invalid(type.kind, type.group, String(o.metadata.name ?? ''), errors);
  }

  private checkNamespace(type: ResourceType, namespace: string | undefined, o: KubeObject): void {
    if (!type.namespaced) {
      delete o.metadata.namespace;
      return;
    }
    if (!namespace) throw badRequest('the server could not find the requested resource (namespace required)');
    if (o.metadata.namespace && o.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    o.metadata.namespace = namespace;
  }

  private checkNamespaceWritable(type: ResourceType, namespace: string | undefined, name: string): void {
    if (!type.namespaced || !namespace) return;
    const ns = this.store.get('/namespaces', undefined, namespace);
    if (!ns) throw notFound('namespaces', '', namespace);
    if (ns.metadata.deletionTimestamp) {
      throw forbiddenRequest(`${type.plural}${type.group ? `.${type.group}` : ''} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, type.plural, type.group, name);
    }
  }

  /** Cluster IPs come from a 127.x range so the local service proxy can listen on them. */
  private allocateClusterIp(o: KubeObject): void {
    const spec = isJsonObject(o.spec) ? o.spec : {};
    if (spec.type === 'ExternalName' || spec.clusterIP === 'None') {
      if (spec.clusterIP === 'None') spec.clusterIPs = ['None'];
      return;
    }
    if (!spec.clusterIP) {
      const used = new Set(this.store.list('/services').map((s) => (isJsonObject(s.spec) ? s.spec.clusterIP : undefined)));
      let ip = '';
      for (let tries = 0; tries < 65000; tries += 1) {
        const n = this.serviceIpNext;
        this.serviceIpNext = (this.serviceIpNext % 65023) + 1;
        ip = `${this.serviceIpPrefix}${Math.floor(n / 254)}.${(n % 254) + 1}`;
        if (!used.has(ip)) break;
      }
      spec.clusterIP = ip;
    }
    spec.clusterIPs = [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }
}

function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : String(o.metadata.name);
}

function encodeContinue(token: { rv: number; start: string }): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

function decodeContinue(text: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof parsed.rv === 'number' && typeof parsed.start === 'string') return { rv: parsed.rv, start: parsed.start };
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: invalid continue token');
}

function randomName(): string {
  const bytes = randomBytes(5);
  return [...bytes].map((b) => generateNameSuffix[b % generateNameSuffix.length]).join('');
}
