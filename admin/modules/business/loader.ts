import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AdminPaths } from '../../../lib/ports.js';
import { ApiRouter } from '../../http/router.js';
import type { AdminServices } from '../../services.js';

/**
 * A business module is a folder with an index module exporting `register(router, services)`.
 * Its routes are mounted at /api/v1/business/<folder> behind API permission unless a route says
 * otherwise; `init(services)` runs once at start-up when present.
 */
export interface BusinessModule {
  register(router: ApiRouter, services: AdminServices): void | Promise<void>;
  init?(services: AdminServices): Promise<void>;
  /** Route tags for the API table (default: the folder name). */
  tags?: string[];
}

/** The folder holding the shipped business modules (this file's own folder). */
export const defaultBusinessDir = fileURLToPath(new URL('.', import.meta.url));

const moduleName = /^[a-z][a-z0-9-]*$/;

function isBusinessModule(value: unknown): value is BusinessModule {
  return !!value && typeof (value as BusinessModule).register === 'function';
}

/** Finds index.js (compiled) or index.ts (run from source) of each module folder. */
function entryOf(dir: string): string | undefined {
  for (const name of ['index.js', 'index.ts']) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

export async function loadBusinessModules(services: AdminServices, dir = defaultBusinessDir): Promise<ApiRouter[]> {
  if (!existsSync(dir)) return [];
  const routers: ApiRouter[] = [];
  for (const name of readdirSync(dir).sort()) {
    const folder = join(dir, name);
    if (!statSync(folder).isDirectory()) continue;
    if (!moduleName.test(name)) {
      services.logger.warn({ module: name }, 'business module folder ignored: names are lower-case kebab-case');
      continue;
    }
    const entry = entryOf(folder);
    if (!entry) {
      services.logger.warn({ module: name }, 'business module folder has no index; ignored');
      continue;
    }
    const imported = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    const candidate = isBusinessModule(imported.default) ? imported.default : imported;
    if (!isBusinessModule(candidate)) throw new Error(`business module ${name}: ${entry} does not export register(router, services)`);
    const router = new ApiRouter(`${AdminPaths.apiPrefix}/business/${name}`, { guard: 'permission', tags: candidate.tags ?? [name] });
    await candidate.register(router, services);
    await candidate.init?.(services);
    services.logger.info({ module: name, routes: router.routes.length }, 'business module mounted');
    routers.push(router);
  }
  return routers;
}
