import { hostname } from 'node:os';
import { loadKubeConfig } from '../lib/kube/client.js';
import type { Logger } from '../lib/log.js';
import { Controller } from './controller.js';
import { OperatorKubeApi } from './kube-api.js';
import { LeaderElector, type LeaderTimings } from './leader-election.js';
import { createOperatorMetrics } from './metrics.js';
import { startOperatorServers } from './server.js';

export interface OperatorSettings {
  kubeconfig?: string;
  /** Namespaces to watch; empty means all (WATCH_NAMESPACE). */
  namespaces: string[];
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity?: string;
  /** Lease timings (default: client-go's 15 s / 10 s / 2 s). */
  leaderTimings?: Partial<LeaderTimings>;
  health: { host: string; port: number };
  metrics: { host: string; port: number };
  relistIntervalMs: number;
  /** How long a new CA is only trusted before it signs (default: defaultCaRotation's). */
  caTrustPropagationMs?: number;
  operatorVersion: string;
  logger: Logger;
  /**
   * Called when leadership is lost. The command exits so a fresh process starts clean (client-go
   * practice); without it (embedded, e.g. `keelson local up`) the instance stands by and builds a
   * new controller (fresh queue and informers) when it leads again.
   */
  onLostLeadership?: () => void;
}

export interface RunningOperator {
  healthUrl: string;
  metricsUrl: string;
  isLeader: () => boolean;
  stop: () => Promise<void>;
}

/** Starts the probe servers, then the controller once this instance leads (or at once without election). */
export async function runOperator(settings: OperatorSettings): Promise<RunningOperator> {
  const { logger } = settings;
  const kubeConfig = loadKubeConfig({ kubeconfig: settings.kubeconfig });
  const api = new OperatorKubeApi(kubeConfig);
  const metrics = createOperatorMetrics();
  const newController = () =>
    new Controller({
      api,
      metrics,
      logger,
      operatorVersion: settings.operatorVersion,
      namespaces: settings.namespaces,
      relistIntervalMs: settings.relistIntervalMs,
      ...(settings.caTrustPropagationMs !== undefined ? { caTrustPropagationMs: settings.caTrustPropagationMs } : {}),
    });
  let controller = newController();
  /** The previous term's controller stopping: a new one starts only after its workers finished. */
  let previousStop: Promise<void> = Promise.resolve();
  let retryTimer: NodeJS.Timeout | undefined;
  let leading = false;
  let stopping = false;
  let controllerError: string | undefined;

  const servers = await startOperatorServers({
    logger,
    metrics,
    health: settings.health,
    metricsAddress: settings.metrics,
    probes: {
      ready: () => {
        if (controllerError) return { ok: false, detail: controllerError };
        if (!leading) return { ok: true, detail: 'standby' };
        if (!controller.synced) return { ok: false, detail: 'leading, caches not synced yet' };
        // Every informer relists at least once per interval; three missed intervals means the API is lost to us.
        const stale = controller.staleInformers(3 * settings.relistIntervalMs);
        return stale > 0 ? { ok: false, detail: `${stale} watch(es) silent for 3 relist intervals` } : { ok: true, detail: 'leading, caches synced' };
      },
    },
  });

  const stopController = () => {
    const current = controller;
    previousStop = previousStop.then(() => current.stop()).catch((err: unknown) => logger.warn({ err }, 'controller did not stop cleanly'));
  };

  // Every start uses a new controller: a stopped one's queue is shut down for good. A start fails
  // when the first list fails (API down, CRD not installed yet): report it in /readyz and try
  // again every 5 s while still leading.
  const startController = () => {
    leading = true;
    metrics.isLeader.set(1);
    const current = newController();
    controller = current;
    previousStop
      .then(() => {
        if (controller !== current || !leading || stopping) return;
        return current.start().then(() => {
          if (controller === current) controllerError = undefined;
        });
      })
      .catch((err: unknown) => {
        if (controller !== current || !leading) return;
        controllerError = `controller failed to start: ${err instanceof Error ? err.message : String(err)}`;
        logger.error({ err: controllerError }, 'controller failed to start; retrying in 5 s');
        stopController();
        retryTimer = setTimeout(() => {
          if (!leading || stopping || controller !== current) return;
          startController();
        }, 5_000);
      });
  };

  let elector: LeaderElector | undefined;
  if (settings.leaderElect) {
    elector = new LeaderElector({
      api: api.coordination,
      namespace: settings.leaseNamespace,
      name: settings.leaseName,
      identity: settings.identity ?? `${hostname()}-${process.pid}`,
      ...settings.leaderTimings,
      logger,
      onStartedLeading: startController,
      onStoppedLeading: () => {
        leading = false;
        metrics.isLeader.set(0);
        clearTimeout(retryTimer);
        controllerError = undefined;
        stopController();
        if (!stopping) settings.onLostLeadership?.();
      },
    });
    elector.start();
  } else {
    startController();
  }

  return {
    healthUrl: servers.health.url,
    metricsUrl: servers.metrics.url,
    isLeader: () => leading,
    stop: async () => {
      stopping = true;
      clearTimeout(retryTimer);
      await elector?.stop();
      stopController();
      await previousStop;
      await servers.close();
    },
  };
}
