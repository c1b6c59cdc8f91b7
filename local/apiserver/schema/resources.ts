/** The resource types the server knows: built-ins here, custom resources added from CRDs. */
import type { FieldError } from '../errors.js';
import type { KubeObject } from '../types.js';

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** Read access to other stored objects, for the admission plugins that look at them. */
export interface ObjectReader {
  get(typeKey: string, namespace: string | undefined, name: string): KubeObject | undefined;
  list(typeKey: string, namespace?: string): KubeObject[];
}

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** `.status` is written only through /status (and ignored on the main endpoint). */
  statusSubresource: boolean;
  scale?: ScaleSubresource;
  /** metadata.generation is kept and bumped on spec changes. */
  tracksGeneration: boolean;
  /** PUT to a missing object creates it (Lease, ConfigMap... as a real server allows for some kinds). */
  allowCreateOnUpdate: boolean;
  /**
   * PUT without metadata.resourceVersion overwrites (most built-ins). False where the real
   * server's strategy refuses it with 422: Leases, CRDs and custom resources.
   */
  allowUnconditionalUpdate: boolean;
  /** Extra field selectors beyond metadata.name / metadata.namespace. */
  fieldSelectors?: Record<string, (obj: KubeObject) => string | undefined>;
  /** Table columns after NAME (AGE is appended unless `customColumns`). */
  columns?: PrinterColumn[];
  /** Built-ins: the NAME cell when it says more than the name (a default StorageClass). */
  nameCell?: (obj: KubeObject) => string;
  /** Built-ins: columns after AGE that `kubectl get -o wide` shows (priority 1). */
  wideColumns?: PrinterColumn[];
  customColumns?: boolean;
  /** Runs on create only, before defaulting (e.g. the namespace `kubernetes` finalizer). */
  prepareCreate?: (obj: KubeObject) => void;
  /** Fills defaults on create and update. */
  defaults?: (obj: KubeObject) => void;
  /** Decoding checks (400) and validation (422). */
  decode?: (obj: KubeObject, old?: KubeObject) => void;
  validate?: (obj: KubeObject, old: KubeObject | undefined) => FieldError[];
  /**
   * Admission plugins that read other objects: `onCreate` mutates before defaulting and
   * validation, `onUpdate` checks after validation (main resource only) and throws its refusal.
   */
  admission?: {
    onCreate?: (obj: KubeObject, objects: ObjectReader) => void;
    onUpdate?: (obj: KubeObject, old: KubeObject, objects: ObjectReader) => void;
  };
  /** Carries server-assigned values over on update when the client left them out (Service clusterIP). */
  prepareUpdate?: (obj: KubeObject, old: KubeObject) => void;
  /** Set for custom resources. */
  crdName?: string;
  /** The CRD's structural schema, published in OpenAPI v3 (so `kubectl explain` works). */
  openApiSchema?: Record<string, unknown>;
  /** Virtual create-only resources (access reviews): POST answers, nothing is stored. */
  createOnly?: boolean;
  /** Extra subresource names (e.g. pods/binding). */
  extraSubresources?: string[];
}

export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

export function groupResource(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** Every served type, by "group/version/plural"; CRDs add and remove entries at run time. */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();
  private revision = 0;
  private readonly listeners = new Set<() => void>();

  add(type: ResourceType): void {
    this.types.set(`${type.group}/${type.version}/${type.plural}`, type);
    this.changed();
  }

  remove(group: string, version: string, plural: string): void {
    this.types.delete(`${group}/${version}/${plural}`);
    this.changed();
  }

  get(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${version}/${plural}`);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const type of this.types.values()) if (apiVersionOf(type) === apiVersion && type.kind === kind) return type;
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Group-versions in a stable order (core first, then by group name). */
  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.types.values()) seen.set(`${t.group}/${t.version}`, { group: t.group, version: t.version });
    return [...seen.values()].sort((a, b) => (a.group === b.group ? a.version.localeCompare(b.version) : a.group.localeCompare(b.group)));
  }

  /** Bumped on every change; discovery and OpenAPI hashes derive from it. */
  get generation(): number {
    return this.revision;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.revision += 1;
    for (const l of this.listeners) l();
  }
}
