/** Shared pieces of the node agent tests: the test image mapping, a random address block, polling. */
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ImageMapping } from '../../../local/node/images.js';

export const httpPodScript = fileURLToPath(new URL('./fixtures/http-pod.mjs', import.meta.url));

/** `registry.test/http-pod:<any tag>` runs the fixture HTTP server with node. */
export const testImages: ImageMapping[] = [{ repository: 'registry.test/http-pod', entrypoint: [process.execPath, httpPodScript] }];

/** A /24 inside 127.0.0.0/8 that other tests running at the same time are unlikely to use. */
export function randomIpPrefix(): string {
  return `127.${randomInt(100, 250)}.${randomInt(1, 250)}`;
}

export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function getJson(url: string, timeoutMs = 2000): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export async function post(url: string): Promise<number> {
  const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status;
}

export async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}
