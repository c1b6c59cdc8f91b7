import * as k8s from '@kubernetes/client-node';

export { KubeNotConfiguredError, loadKubeConfig, SERVICE_ACCOUNT_DIR, type KubeSources } from './kube-config.js';

/** HTTP status of a failed client-node call, or undefined for network-level errors. */
export function apiStatusCode(error: unknown): number | undefined {
  if (error instanceof k8s.ApiException) return error.code;
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'number') {
    return (error as { code: number }).code;
  }
  return undefined;
}

export const isConflict = (error: unknown): boolean => apiStatusCode(error) === 409;
export const isNotFound = (error: unknown): boolean => apiStatusCode(error) === 404;
export const isAlreadyExists = (error: unknown): boolean => apiStatusCode(error) === 409;

/** A short one-line description of a client-node failure for logs (no bodies, which may be large). */
export function describeApiError(error: unknown): string {
  const code = apiStatusCode(error);
  const message = statusMessage(error) ?? (error instanceof Error ? error.message.split('\n')[0] : String(error));
  return code === undefined ? message : `HTTP ${code}: ${message.slice(0, 200)}`;
}

/** The `message` of a Kubernetes Status body (client-node's own error text says only "HTTP-Code: 422"). */
function statusMessage(error: unknown): string | undefined {
  const body = error && typeof error === 'object' && 'body' in error ? (error as { body: unknown }).body : undefined;
  if (typeof body !== 'string') return undefined;
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/** The current time as a MicroTime that the API server accepts (exactly 6 fraction digits). */
export function microTimeNow(now: Date = new Date()): k8s.V1MicroTime {
  return new k8s.V1MicroTime(now.getTime());
}

/**
 * Request options that abort the call after `ms` (a frozen API server must not hang the caller),
 * plus any further middleware (connection reuse, see keep-alive.ts).
 */
export function withRequestTimeout(ms: number, ...more: k8s.ObservableMiddleware[]): k8s.ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(ms));
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (response) => new k8s.Observable(Promise.resolve(response)),
      },
      ...more,
    ],
    middlewareMergeStrategy: 'append',
  };
}
