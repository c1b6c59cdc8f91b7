import { setTimeout as delay } from 'node:timers/promises';

/** Kubernetes `metav1.Time`: RFC 3339 in UTC with whole seconds. */
export function kubeTime(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Accepts what client-node hands out for times: a Date (typed lists) or a string (raw watch events). */
export function toDate(value: Date | string | undefined | null): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Sleeps unless the signal aborts first; resolves false when aborted. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await delay(Math.max(ms, 0), undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
