/**
 * Watch streams: one JSON event per line over a chunked 200 response whose headers are flushed at
 * once (client-node's informer waits for them). Replays from the store's history, reports 410
 * Expired as an ERROR event, turns selector transitions into ADDED/DELETED, sends BOOKMARKs.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';
import type { ApiCore } from '../api.js';
import { typeKeyOf } from '../api.js';
import { apiVersionOf, type ResourceType } from '../schema/resources.js';
import type { StoreEvent } from '../storage/store.js';
import { toTable } from './table.js';
import type { KubeObject } from '../types.js';

export interface WatchRequest {
  type: ResourceType;
  namespace?: string;
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowBookmarks: boolean;
  timeoutSeconds?: number;
  table: boolean;
  /** Identity of the client, for fault injection (drop this client's watches). */
  identity: string;
}

export interface WatchHooks {
  bookmarkIntervalMs: number;
  defaultTimeoutSeconds: number;
  /** Runs the write now, or later when the server is paused. */
  deliver(write: () => void): void;
  /** Registers a way to cut this watch; returns the unregister function. */
  track(identity: string, stop: (reset: boolean) => void): () => void;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * Maps a store event to what a watcher with a selector sees (or nothing). An object that stops
 * matching arrives as DELETED carrying its previous (matching) content stamped with the new
 * resourceVersion, as the real watch cache sends it.
 */
export function translate(event: StoreEvent, matches: (o: KubeObject) => boolean): { type: WatchEventType; object: KubeObject } | undefined {
  const now = matches(event.object);
  const as = (type: WatchEventType, object = event.object) => ({ type, object });
  if (event.type === 'ADDED') return now ? as('ADDED') : undefined;
  if (event.type === 'DELETED') return (event.previous && matches(event.previous)) || now ? as('DELETED') : undefined;
  const before = event.previous ? matches(event.previous) : false;
  if (before && now) return as('MODIFIED');
  if (before && event.previous)
    return as('DELETED', { ...event.previous, metadata: { ...event.previous.metadata, resourceVersion: event.object.metadata.resourceVersion } });
  if (now) return as('ADDED');
  return undefined;
}

export function serveWatch(core: ApiCore, res: ServerResponse, request: WatchRequest, hooks: WatchHooks): void {
  const { type } = request;
  const namespace = type.namespaced ? request.namespace : undefined;
  const matcher = core.matcher(type, request.labelSelector, request.fieldSelector);
  const inScope = (o: KubeObject): boolean => (namespace === undefined || o.metadata.namespace === namespace) && matcher(o);
  const key = typeKeyOf(type);

  let backlog: Array<{ type: WatchEventType; object: KubeObject }> = [];
  let expiredError: ApiError | undefined;
  const rv = request.resourceVersion;
  if (rv === undefined || rv === '' || rv === '0') {
    backlog = core.store
      .list(key, namespace)
      .filter(matcher)
      .map((o) => ({ type: 'ADDED' as const, object: o }));
  } else {
    const since = Number(rv);
    if (!Number.isInteger(since) || since < 0) throw new ApiError(400, 'BadRequest', `invalid resource version: ${rv}`);
    try {
      for (const event of core.store.eventsSince(since)) {
        if (event.typeKey !== key) continue;
        const seen = translate(event, inScope);
        if (seen) backlog.push(seen);
      }
    } catch (err) {
      if (err instanceof ApiError && err.code === 410) expiredError = err;
      else throw err;
    }
  }

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();

  let first = true;
  const send = (eventType: WatchEventType, object: unknown): void => {
    if (res.writableEnded || res.destroyed) return;
    res.write(JSON.stringify({ type: eventType, object }) + '\n');
  };
  const sendObject = (eventType: WatchEventType, o: KubeObject): void => {
    const out = core.output(type, o);
    if (request.table && eventType !== 'BOOKMARK') {
      send(eventType, toTable(type, [out], { resourceVersion: out.metadata.resourceVersion }, first));
      first = false;
    } else send(eventType, out);
  };

  if (expiredError) {
    send('ERROR', expiredError.toStatus());
    res.end();
    return;
  }

  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  const unsubscribe = core.store.subscribe((event) => {
    if (event.typeKey !== key) return;
    const seen = translate(event, inScope);
    if (seen) hooks.deliver(() => sendObject(seen.type, seen.object));
  });
  // A CRD deletion removes the type: its watches end, as on a real server.
  const unwatchRegistry = core.registry.onChange(() => {
    if (!core.registry.get(type.group, type.version, type.plural)) stop();
  });
  const stop = (reset = false): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    unwatchRegistry();
    untrack();
    for (const t of timers) clearTimeout(t);
    // A reset is a broken connection: the client sees an error rather than a clean end.
    if (reset) res.socket?.destroy();
    else if (!res.writableEnded) res.end();
  };
  const untrack = hooks.track(request.identity, (reset) => stop(reset));
  res.on('close', () => stop());

  for (const item of backlog) hooks.deliver(() => sendObject(item.type, item.object));

  if (request.allowBookmarks) {
    const bookmark = (): void => {
      hooks.deliver(() =>
        send('BOOKMARK', { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(core.store.currentRevision) } }),
      );
    };
    const interval = setInterval(bookmark, hooks.bookmarkIntervalMs);
    interval.unref();
    timers.push(interval);
  }
  const timeout = setTimeout(() => stop(), (request.timeoutSeconds ?? hooks.defaultTimeoutSeconds) * 1000);
  timeout.unref();
  timers.push(timeout);
}
