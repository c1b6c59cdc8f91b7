import { createRequire } from 'node:module';
import type * as fsModule from 'node:fs';
import type * as httpModule from 'node:http';
import type * as httpsModule from 'node:https';

/**
 * Node built-ins whose ES import costs memory in every process, required instead.
 *
 * An `import … from 'node:x'` makes Node build the module's ES namespace, and building it reads
 * every export, lazy getters included (Node 22+). `node:http`'s lazy exports load Node's fetch
 * stack (undici, ≈ 8 MB of RSS on Node 24); `node:fs`'s `promises` loads fs/promises, readline
 * and the REPL history module (≈ 1 MB). require() reads only what is used. `node:https` is
 * loaded only when a server needs TLS: it brings tls and OpenSSL's contexts (≈ 7 MB on Node 24).
 */
const require = createRequire(import.meta.url);

export const fs = require('node:fs') as typeof fsModule;
export const http = require('node:http') as typeof httpModule;

let httpsLoaded: typeof httpsModule | undefined;
export function https(): typeof httpsModule {
  httpsLoaded ??= require('node:https') as typeof httpsModule;
  return httpsLoaded;
}
