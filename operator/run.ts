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
  const controller = new Controller({ api, metrics, logger, operatorVersion: settings.operatorVersion, namespaces: settings.namespaces, relistIntervalMs: settings.relistIntervalMs });
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

  const startController = () => {
    leading = true;
    metrics.isLeader.set(1);
    controller.start().catch((err: unknown) => {
      controllerError = `controller failed to start: ${err instanceof Error ? err.message : String(err)}`;
      logger.error({ err }, 'controller failed to start');
    });
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
      await elector?.stop();
      await controller.stop();
      await servers.close();
    },
  };
}
