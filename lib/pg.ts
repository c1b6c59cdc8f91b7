import { createRequire } from 'node:module';
import type * as PgModule from 'pg';

export type { Client, CustomTypesConfig, Pool, PoolClient, QueryResult } from 'pg';

/**
 * node-postgres, loaded so that its runtime detection does not pull in Node's fetch stack. When
 * pg loads it asks whether it runs in a Cloudflare Worker; with no `navigator` global (Node 20)
 * it builds a fetch `Response` to find out, which loads undici and compiles its WebAssembly
 * parser: about 4 MB of resident memory in a process that never uses fetch. Node 21 and later
 * define `navigator` themselves; on older versions a stand-in exists only while pg loads.
 */
function loadPg(): typeof PgModule {
  const require = createRequire(import.meta.url);
  const scope = globalThis as { navigator?: unknown };
  if (scope.navigator !== undefined) return require('pg') as typeof PgModule;
  scope.navigator = { userAgent: `Node.js/${process.versions.node}` };
  try {
    return require('pg') as typeof PgModule;
  } finally {
    delete scope.navigator;
  }
}

export const pg = loadPg();
