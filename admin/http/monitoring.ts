import { Counter, Histogram, Registry } from 'prom-client';
import { AdminPaths } from '../../lib/ports.js';

/**
 * Request monitoring: duration and count per route template, method and envelope code. Templates
 * keep the label set bounded. Authentication routes are never collected (spec rule 13), so
 * nothing about login traffic, successful or not, leaves through metrics.
 */
export interface RequestMetrics {
  readonly registry: Registry;
  observe(method: string, template: string, code: string, seconds: number): void;
}

const authPrefix = `${AdminPaths.apiPrefix}/auth/`;

export const isMonitored = (template: string): boolean => !template.startsWith(authPrefix);

export function createRequestMetrics(): RequestMetrics {
  // One registry per admin instance: several instances (tests) may share a process.
  const registry = new Registry();
  const duration = new Histogram({
    name: 'admin_http_request_duration_seconds',
    help: 'Time to answer an API request, by route template, method and envelope code.',
    labelNames: ['method', 'route', 'code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'admin_http_requests_total',
    help: 'API requests answered, by route template, method and envelope code.',
    labelNames: ['method', 'route', 'code'] as const,
    registers: [registry],
  });
  return {
    registry,
    observe(method, template, code, seconds) {
      if (!isMonitored(template)) return;
      const labels = { method, route: template, code };
      duration.observe(labels, seconds);
      requests.inc(labels);
    },
  };
}
