import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');

let loaded: YamlModule | undefined;

/**
 * The YAML library, loaded on first use: the exporter needs it only when it is given a
 * configuration file (the built-in collector set and the StatefulSet's default arguments need
 * none), and what a long-running sidecar never loads costs it neither start-up nor memory.
 * Synchronous, so callers stay synchronous.
 */
export function yaml(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}
