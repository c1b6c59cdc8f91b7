/** Shared pieces of built-in kind definitions. */
import { dropUnknownFields, modelName } from '../known-fields.js';
import type { PrinterColumn, ResourceType } from '../resources.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../../types.js';
import type { NameRule } from '../../writes/validation.js';

export type Spec = Partial<ResourceType> & Pick<ResourceType, 'group' | 'version' | 'plural' | 'kind'> & { nameRule?: NameRule };

export function define(spec: Spec): ResourceType & { nameRule: NameRule } {
  const model = modelName(spec.kind);
  const ownDecode = spec.decode;
  return {
    singular: spec.kind.toLowerCase(),
    namespaced: true,
    statusSubresource: false,
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    nameRule: 'subdomain',
    ...spec,
    decode: (o, old) => {
      ownDecode?.(o, old);
      // Unknown fields vanish as in Go decoding; admit() turns them into a 400 under Strict.
      if (model) (o as { __strict?: string[] }).__strict = dropUnknownFields(o, model).map((p) => `unknown field "${p}"`);
    },
  };
}

export function obj(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {};
}

export function specOf(o: KubeObject): JsonObject {
  if (!isJsonObject(o.spec)) o.spec = {};
  return o.spec as JsonObject;
}

/** A printer column whose cell is computed from the object (built-ins only). */
export type ComputedColumn = PrinterColumn & { value?: (o: KubeObject) => unknown };

export const computedColumn = (value: (o: KubeObject) => unknown, name = 'Ready'): PrinterColumn & { value: (o: KubeObject) => unknown } => ({
  name,
  type: 'string',
  jsonPath: '',
  value,
});

export type BuiltinType = ReturnType<typeof define>;

/** Name rule of a built-in type (custom resources use DNS subdomains). */
export function nameRuleOf(type: ResourceType): NameRule {
  return (type as Partial<BuiltinType>).nameRule ?? 'subdomain';
}
