/**
 * In-memory object store: one global resourceVersion (like etcd's revision), a bounded event
 * history for watch resume, and synchronous fan-out to watchers so no event can slip between
 * a list and the watch that follows it.
 */
import { expired } from '../errors.js';
import { clone, type KubeObject } from '../types.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  /** "group/plural": storage is shared across versions of one resource. */
  typeKey: string;
  revision: number;
  object: KubeObject;
  /** The object before this change (MODIFIED and DELETED). */
  previous?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreSnapshot {
  revision: number;
  objects: Array<{ typeKey: string; object: KubeObject }>;
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class ObjectStore {
  private revision: number;
  private readonly buckets = new Map<string, Map<string, KubeObject>>();
  private readonly history: StoreEvent[] = [];
  /** Every event after this revision is still in `history`. */
  private historyStart: number;
  private readonly listeners = new Set<StoreListener>();

  constructor(
    private readonly historyLimit = 1000,
    startRevision = 1,
  ) {
    this.revision = startRevision;
    this.historyStart = startRevision;
  }

  get currentRevision(): number {
    return this.revision;
  }

  get oldestResumableRevision(): number {
    return this.historyStart;
  }

  get(typeKey: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.buckets.get(typeKey)?.get(objectKey(namespace, name));
    return found ? clone(found) : undefined;
  }

  /** Objects of one type, optionally in one namespace, sorted by namespace/name like etcd keys. */
  list(typeKey: string, namespace?: string): KubeObject[] {
    const bucket = this.buckets.get(typeKey);
    if (!bucket) return [];
    const keys = [...bucket.keys()].sort();
    const out: KubeObject[] = [];
    for (const key of keys) {
      const obj = bucket.get(key) as KubeObject;
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push(clone(obj));
    }
    return out;
  }

  typeKeys(): string[] {
    return [...this.buckets.keys()];
  }

  /** Writes an object with a fresh resourceVersion and tells watchers; returns the stored copy. */
  put(typeKey: string, object: KubeObject): KubeObject {
    const bucket = this.bucket(typeKey);
    const key = objectKey(object.metadata.namespace, object.metadata.name as string);
    const previous = bucket.get(key);
    this.revision += 1;
    const stored = clone(object);
    stored.metadata.resourceVersion = String(this.revision);
    bucket.set(key, stored);
    this.emit({ type: previous ? 'MODIFIED' : 'ADDED', typeKey, revision: this.revision, object: stored, previous });
    return clone(stored);
  }

  /** Removes an object; the DELETED event carries a new resourceVersion as a real server's does. */
  remove(typeKey: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const bucket = this.buckets.get(typeKey);
    const key = objectKey(namespace, name);
    const previous = bucket?.get(key);
    if (!bucket || !previous) return undefined;
    bucket.delete(key);
    this.revision += 1;
    const gone = clone(previous);
    gone.metadata.resourceVersion = String(this.revision);
    this.emit({ type: 'DELETED', typeKey, revision: this.revision, object: gone, previous });
    return clone(gone);
  }

  /** Drops a whole type's storage (CRD deletion) after its objects were removed one by one. */
  dropType(typeKey: string): void {
    this.buckets.delete(typeKey);
  }

  /** Events after `revision` for replay, or 410 Expired when history no longer reaches back. */
  eventsSince(revision: number): StoreEvent[] {
    if (revision < this.historyStart) {
      throw expired(`too old resource version: ${revision} (${this.historyStart})`);
    }
    return this.history.filter((e) => e.revision > revision);
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets history (tests use this to force 410 on resume). */
  compact(): void {
    this.history.length = 0;
    this.historyStart = this.revision;
  }

  snapshot(): StoreSnapshot {
    const objects: StoreSnapshot['objects'] = [];
    for (const [typeKey, bucket] of this.buckets) for (const object of bucket.values()) objects.push({ typeKey, object: clone(object) });
    return { revision: this.revision, objects };
  }

  /** Loads a snapshot without events (history starts at the loaded revision). */
  restore(snapshot: StoreSnapshot): void {
    this.buckets.clear();
    for (const { typeKey, object } of snapshot.objects) {
      this.bucket(typeKey).set(objectKey(object.metadata.namespace, object.metadata.name as string), clone(object));
    }
    this.revision = snapshot.revision;
    this.compact();
  }

  private bucket(typeKey: string): Map<string, KubeObject> {
    let bucket = this.buckets.get(typeKey);
    if (!bucket) {
      bucket = new Map();
      this.buckets.set(typeKey, bucket);
    }
    return bucket;
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift() as StoreEvent;
      this.historyStart = dropped.revision;
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // a broken watcher must not stop the write or the other watchers
      }
    }
  }
}
