/** Optional state file so a demo cluster survives a restart: the store snapshot as JSON. */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ObjectStore, StoreSnapshot } from './store.js';

export function loadState(path: string): StoreSnapshot | undefined {
  if (!existsSync(path)) return undefined;
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoreSnapshot>;
  if (typeof parsed.revision !== 'number' || !Array.isArray(parsed.objects)) throw new Error(`state file ${path} is not a Keelson API server snapshot`);
  return parsed as StoreSnapshot;
}

/** Saves after writes settle (debounced) and once more on stop; writes go through a temp file. */
export function persistState(store: ObjectStore, path: string, onError: (err: unknown) => void, delayMs = 200): { flush(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const temp = `${path}.tmp`;
    writeFileSync(temp, JSON.stringify(store.snapshot()));
    renameSync(temp, path);
  };
  const unsubscribe = store.subscribe(() => {
    if (!timer) {
      timer = setTimeout(() => {
        try {
          flush();
        } catch (err) {
          onError(err);
        }
      }, delayMs);
    }
  });
  return {
    flush,
    stop: () => {
      unsubscribe();
      flush();
    },
  };
}
