import { hostname } from 'node:os';
import { loadKubeConfig } from '../lib/kube/client.js';
import type { Logger } from '../lib/log.js';
import { Controller } from './controller.js';
import { OperatorKubeApi } from './kube-api.js';
import { LeaderElector } from './leader-election.js';
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
  health: { host: string; port: number };
  metrics: { host: string; port: number };
  relistIntervalMs: number;
  operatorVersion: string;
  logger: Logger;
  /** Called when leadership is lost; the command exits so a fresh process starts clean (client-go practice). */
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
    new Controller({ api, metrics, logger, operatorVersion: settings.operatorVersion, namespaces: settings.namespaces, relistIntervalMs: settings.relistIntervalMs });
  let controller = newController();
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

  // A start fails when the first list fails (API down, CRD not installed yet): report it in
  // /readyz and try again with a fresh controller every 5 s while still leading.
  const startController = () => {
    leading = true;
    metrics.isLeader.set(1);
    controller.start().then(
      () => {
        controllerError = undefined;
      },
      (err: unknown) => {
        controllerError = `controller failed to start: ${err instanceof Error ? err.message : String(err)}`;
        logger.error({ err: controllerError }, 'controller failed to start; retrying in 5 s');
        void controller.stop();
        retryTimer = setTimeout(() => {
          if (!leading || stopping) return;
          controller = newController();
          startController();
        }, 5_000);
      },
    );
  };

  let elector: LeaderElector | undefined;
  if (settings.leaderElect) {
    elector = new LeaderElector({
      api: api.coordination,
      namespace: settings.leaseNamespace,
      name: settings.leaseName,
      identity: settings.identity ?? `${hostname()}-${process.pid}`,
      logger,
      onStartedLeading: startController,
      onStoppedLeading: () => {
        leading = false;
        metrics.isLeader.set(0);
        void controller.stop();
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
      await controller.stop();
      await servers.close();
    },
  };
}
