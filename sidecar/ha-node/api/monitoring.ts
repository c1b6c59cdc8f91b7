import type { Router } from 'express';
import { describeApiError } from '../../../lib/kube/client.js';
import { HaNodePaths } from '../../../lib/ports.js';
import { clusterDocument, historyDocument } from './cluster-document.js';
import type { ApiContext } from './context.js';
import { metricLabels, renderMetrics } from './metrics-text.js';
import { archivePending, renderBackupMetrics } from '../backup/metrics.js';
import { renderVolumeMetrics } from '../disk/usage.js';
import { withLiveVolumes } from '../disk/document.js';
import { renderCertificateMetrics } from './certificate-metrics.js';

/**
 * GET /metrics, /cluster, /history, /poolers. The last two are open to anyone who can reach the pod, so they
 * come from the DCS watch cache and cost the API server nothing (a fresh read only when the cache
 * is not current, e.g. before the first LIST or while the watch reconnects).
 */
export const monitoringRoutes = (router: Router, context: ApiContext): void => {
  router.get(HaNodePaths.metrics, (_req, res) => {
    const snapshot = withLiveVolumes(context.snapshot(), context.pg?.settings.dataDir);
    const keeper = context.backup;
    const backup = keeper
      ? renderBackupMetrics(
          {
            status: keeper.status(),
            info: keeper.cachedInfo(),
            pending: archivePending(keeper.engine.dataDir),
            archiveTimeout: keeper.engine.config.archiveTimeout,
          },
          metricLabels(snapshot.scope, snapshot.name),
        )
      : '';
    const volumes = renderVolumeMetrics(snapshot.volumes ?? [], metricLabels(snapshot.scope, snapshot.name));
    const certificates = context.certificates ? renderCertificateMetrics(context.certificates, metricLabels(snapshot.scope, snapshot.name)) : '';
    res
      .status(200)
      .type('text/plain; version=0.0.4; charset=utf-8')
      .send(renderMetrics(snapshot) + volumes + backup + certificates);
  });
  router.get(HaNodePaths.cluster, async (req, res) => {
    const snapshot = context.snapshot();
    try {
      const cluster = context.dcs.cachedCluster() ?? (await context.dcs.getCluster());
      res.status(200).json(clusterDocument(cluster, snapshot.scope));
    } catch (error) {
      req.log?.warn({ err: describeApiError(error) }, 'cluster read failed');
      if (snapshot.cluster) res.status(200).json(clusterDocument(snapshot.cluster, snapshot.scope));
      else res.status(502).type('text/plain').send('DCS is not accessible');
    }
  });
  // Read-only like /cluster: the control API's state of every pooler (no address beyond the pods').
  router.get(HaNodePaths.poolers, async (_req, res) => {
    const [poolers, readOnly] = await Promise.all([
      context.poolers?.configured ? context.poolers.states() : [],
      context.readOnlyPoolers?.configured ? context.readOnlyPoolers.states() : [],
    ]);
    res.status(200).json({ poolers: [...poolers, ...readOnly.map((p) => ({ ...p, readOnly: true }))] });
  });
  router.get(HaNodePaths.history, async (_req, res) => {
    const cluster = context.dcs.cachedCluster() ?? (await context.dcs.getCluster().catch(() => context.snapshot().cluster));
    res.status(200).json(historyDocument(cluster?.history ?? []));
  });
};
