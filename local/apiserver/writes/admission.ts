/** Admission of a write: body decoding, namespace checks, defaulting and validation, in a real server's order. */
import { nameRuleOf } from '../schema/builtins.js';
import type { WriteOptions } from '../api-types.js';
import { badRequest, forbiddenRequest, invalid, notFound, type FieldError } from '../errors.js';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from '../schema/resources.js';
import type { ObjectStore } from '../storage/store.js';
import { clone, isJsonObject, type JsonObject, type KubeObject } from '../types.js';
import { decodeMetadata, validateMetadata, validateName } from './validation.js';

/** Type checks of the body: apiVersion/kind must match the URL, metadata must decode. */
export function decodeBody(registry: ResourceRegistry, type: ResourceType, body: unknown): KubeObject {
  if (!isJsonObject(body)) throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: the body must be a JSON object`);
  const o = clone(body) as KubeObject;
  const apiVersion = apiVersionOf(type);
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersion) {
    const other = typeof o.apiVersion === 'string' ? registry.byKind(o.apiVersion, String(o.kind)) : undefined;
    if (!other || other.group !== type.group || other.plural !== type.plural) {
      throw badRequest(`the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersion})`);
    }
  }
  if (o.kind !== undefined && o.kind !== type.kind)
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${String(o.kind)}: no kind "${String(o.kind)}" is registered for version "${apiVersion}"`,
    );
  o.apiVersion = apiVersion;
  o.kind = type.kind;
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  decodeMetadata(o);
  return o;
}

/** A server-side apply body must name its own apiVersion and kind (it is a whole intent, not a diff). */
export function applyBody(registry: ResourceRegistry, type: ResourceType, patch: unknown, name: string): KubeObject {
  if (isJsonObject(patch)) {
    const expected = apiVersionOf(type);
    const version = typeof patch.apiVersion === 'string' ? patch.apiVersion : '';
    if (version !== expected) throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${version}, expected: ${expected}`);
    if (typeof patch.kind !== 'string' || patch.kind === '') {
      const gvk = `${type.group}/${type.version}, Kind=`;
      throw badRequest(`failed to create typed patch object (${gvk}): no corresponding type for ${gvk}`);
    }
  }
  const o = decodeBody(registry, type, patch);
  if (o.metadata.name !== undefined && o.metadata.name !== name)
    throw badRequest(`the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`);
  o.metadata.name = name;
  return o;
}

/**
 * A patched object must still decode and still name the object on the URL (a real server's
 * checkName): a patch that removes or replaces metadata is refused, not applied.
 */
export function checkPatchedName(type: ResourceType, patched: JsonObject, name: string, namespace: string | undefined): KubeObject {
  const meta = patched.metadata;
  if (meta !== undefined && meta !== null && !isJsonObject(meta)) {
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: json: cannot unmarshal ${Array.isArray(meta) ? 'array' : typeof meta} into Go struct field ${type.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  const candidate = patched as KubeObject;
  if (!isJsonObject(meta)) candidate.metadata = {};
  const patchedName = typeof candidate.metadata.name === 'string' ? candidate.metadata.name : '';
  if (patchedName === '') throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
  if (patchedName !== name) throw badRequest(`the name of the object (${patchedName}) does not match the name on the URL (${name})`);
  const patchedNamespace = candidate.metadata.namespace;
  if (namespace && typeof patchedNamespace === 'string' && patchedNamespace !== '' && patchedNamespace !== namespace) {
    throw badRequest(`the namespace of the object (${patchedNamespace}) does not match the namespace on the request (${namespace})`);
  }
  return candidate;
}

/** Defaulting, decoding rules and validation, in the order a real server runs them. */
export function admit(type: ResourceType, o: KubeObject, old: KubeObject | undefined, options: WriteOptions): void {
  // Go's omitempty: empty metadata maps and lists are not stored (a real server never shows them).
  for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences', 'managedFields'] as const) {
    const value = o.metadata[field] as unknown;
    if ((Array.isArray(value) && value.length === 0) || (isJsonObject(value) && Object.keys(value).length === 0)) delete o.metadata[field];
  }
  type.decode?.(o, old);
  type.defaults?.(o);
  const errors: FieldError[] = [];
  if (!old) errors.push(...validateName(o.metadata.name as string, nameRuleOf(type)));
  // Kinds validated by the core API's rules (not custom resources, not CRDs) want qualified finalizers.
  errors.push(...validateMetadata(o, !type.crdName && type.group !== 'apiextensions.k8s.io'));
  errors.push(...(type.validate?.(o, old) ?? []));
  const strictErrors = (o as { __strict?: string[] }).__strict;
  if (strictErrors) {
    delete (o as { __strict?: string[] }).__strict;
    if (strictErrors.length > 0 && options.fieldValidation === 'Strict') {
      throw badRequest(`${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${strictErrors.join(', ')}`);
    }
    // Warn (the default) reports dropped fields as Warning headers; Ignore drops them silently.
    if (options.fieldValidation !== 'Ignore') options.warnings?.push(...strictErrors);
  }
  if (errors.length > 0) throw invalid(type.kind, type.group, String(o.metadata.name ?? ''), errors);
}

export function checkNamespace(type: ResourceType, namespace: string | undefined, o: KubeObject): void {
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

export function checkNamespaceWritable(store: ObjectStore, type: ResourceType, namespace: string | undefined, name: string): void {
  if (!type.namespaced || !namespace) return;
  const ns = store.get('/namespaces', undefined, namespace);
  if (!ns) throw notFound('namespaces', '', namespace);
  if (ns.metadata.deletionTimestamp) {
    throw forbiddenRequest(
      `${type.plural}${type.group ? `.${type.group}` : ''} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      type.plural,
      type.group,
      name,
    );
  }
}
