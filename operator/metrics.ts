import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The operator's Prometheus metrics, in one registry per operator instance (tests run several). */
export function createOperatorMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'keelson_operator_' });
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'keelson_operator_reconcile_total',
      help: 'Reconciles by result (success, error, requeue).',
      labelNames: ['result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'keelson_operator_reconcile_errors_total',
      help: 'Reconciles that failed.',
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'keelson_operator_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({ name: 'keelson_operator_workqueue_depth', help: 'Keys waiting in the work queue.', registers: [registry] }),
    watchRestarts: new Counter({
      name: 'keelson_operator_watch_restarts_total',
      help: 'Watches restarted, by resource and reason (closed, error, expired).',
      labelNames: ['resource', 'reason'],
      registers: [registry],
    }),
    writes: new Counter({
      name: 'keelson_operator_api_writes_total',
      help: 'Writes to the Kubernetes API by kind and verb; flat while clusters are idle.',
      labelNames: ['kind', 'verb'],
      registers: [registry],
    }),
    isLeader: new Gauge({ name: 'keelson_operator_leader', help: '1 while this instance holds the leader Lease.', registers: [registry] }),
  };
}

export type OperatorMetrics = ReturnType<typeof createOperatorMetrics>;
