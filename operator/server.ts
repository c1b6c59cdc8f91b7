import type { Logger } from '../lib/log.js';
import { createApp, serve, type RunningServer } from '../lib/http.js';
import { OperatorPaths } from '../lib/ports.js';
import type { OperatorMetrics } from './metrics.js';

export interface ProbeState {
  /** Ready: caches synced while leading, or standing by as a healthy non-leader. */
  ready: () => { ok: boolean; detail: string };
}

/** /healthz and /readyz on the health port; /metrics on the metrics port (as in the chart's probes). */
export async function startOperatorServers(options: {
  logger: Logger;
  metrics: OperatorMetrics;
  probes: ProbeState;
  health: { host: string; port: number };
  metricsAddress: { host: string; port: number };
}): Promise<{ health: RunningServer; metrics: RunningServer; close: () => Promise<void> }> {
  const healthApp = createApp(options.logger);
  healthApp.get(OperatorPaths.healthz, (_req, res) => {
    res.type('text/plain').send('ok');
  });
  healthApp.get(OperatorPaths.readyz, (_req, res) => {
    const { ok, detail } = options.probes.ready();
    res
      .status(ok ? 200 : 503)
      .type('text/plain')
      .send(detail);
  });
  const metricsApp = createApp(options.logger);
  metricsApp.get(OperatorPaths.metrics, async (_req, res) => {
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });
  const health = await serve(healthApp, { ...options.health, logger: options.logger });
  const metrics = await serve(metricsApp, { ...options.metricsAddress, logger: options.logger });
  return {
    health,
    metrics,
    close: async () => {
      await Promise.all([health.close(), metrics.close()]);
    },
  };
}
