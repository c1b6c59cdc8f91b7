/** What each contract case module gets: the running server of the current target. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { ContractServer, ContractTarget } from './targets.js';

export interface CaseContext {
  target: ContractTarget;
  server: ContractServer;
}

/** Every case module registers its `it`s with a getter (the server starts in `before`). */
export type CaseModule = (ctx: () => CaseContext) => void;

export const NS = 'contract';
export const cmPath = (name = ''): string => `/api/v1/namespaces/${NS}/configmaps${name ? `/${name}` : ''}`;

/**
 * A documented difference (docs/local-kubernetes.md, "Oracle lane"): the real server's answer
 * and the stand-in's, asserted per target so neither side can drift unnoticed.
 */
export function differs<T>(ctx: CaseContext, values: { real: T; standIn: T }): T {
  return ctx.target.real ? values.real : values.standIn;
}

/** Polls until check() returns a value (not undefined) or throws after timeoutMs. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A temp folder (manifests for kubectl) for one case module's cases, removed after them. */
export function caseTempDir(prefix: string): () => string {
  let dir: string | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error(`${prefix}: the temp folder exists only while the cases run`);
    return dir;
  };
}
