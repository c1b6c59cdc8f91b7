/**
 * NODE_OPTIONS of every exporter container: Node's start-up flags for a process that waits on
 * PostgreSQL and runs for months.
 *
 * `--jitless` runs all JavaScript in V8's interpreter and creates no executable memory: no code
 * range, no remapped copy of V8's built-ins, no baseline or regular-expression code. On Node 24
 * that is ≈ 3.8 MB less resident memory per exporter, with the same scrape times (a scrape
 * waits on PostgreSQL, and the exporter's own JavaScript is small). It must be given at start:
 * set at run time, like the other flags in memory.ts, it saves nothing. It also disables
 * WebAssembly, which the exporter does not use (it never loads Node's fetch stack).
 */
export const exporterNodeOptions = '--jitless';

/**
 * Connect timeout of the exporters the operator runs, in ms (PG_EXPORTER_CONNECT_TIMEOUT).
 * pg_exporter's 100 ms, still the default of a hand-started exporter, does not hold on a loaded
 * node: a healthy server then reads as down (pg_up 0, health endpoints 503) and alerts fire. A
 * refused connection still reads as down at once; only a slow one gets the longer wait.
 */
export const podConnectTimeoutMs = 3000;

/** The environment every exporter container of a Keelson pod gets besides its target. */
export const exporterPodEnv: readonly { name: string; value: string }[] = [
  { name: 'NODE_OPTIONS', value: exporterNodeOptions },
  { name: 'PG_EXPORTER_CONNECT_TIMEOUT', value: String(podConnectTimeoutMs) },
];
