import type { V1Pod } from '@kubernetes/client-node';

/**
 * The rules of early takeover (ADR 0404): a replica may take the leader lease before it expires
 * only when three independent sources agree that the whole leader pod is gone. Each source says
 * `dead`, `alive` or `unknown`; anything short of three times `dead` means "wait for expiry".
 */
export type Signal = 'dead' | 'alive' | 'unknown';

export interface CrashEvidence {
  /** The kubelet, through the pod status: the container running ha-node and PostgreSQL. */
  kubelet: Signal;
  /** A TCP connect to the leader's PostgreSQL port. */
  postgres: Signal;
  /** A TCP connect to the leader's REST API port. */
  api: Signal;
}

export function leaderCrashed(evidence: CrashEvidence): boolean {
  return evidence.kubelet === 'dead' && evidence.postgres === 'dead' && evidence.api === 'dead';
}

/**
 * What the kubelet reports about the container that runs ha-node (and, as its children,
 * PostgreSQL and the fencer). Terminated, or waiting after a termination (restart back-off), is
 * dead: the runtime has reaped every process of the container. A missing pod proves nothing (a
 * forced delete removes the object while the processes may still run), nor does readiness.
 */
export function kubeletSignal(pod: V1Pod | undefined, container: string): Signal {
  if (!pod?.status) return 'unknown';
  if (pod.status.phase === 'Failed' || pod.status.phase === 'Succeeded') return 'dead';
  const status = pod.status.containerStatuses?.find((c) => c.name === container);
  if (!status?.state) return 'unknown';
  if (status.state.terminated) return 'dead';
  if (status.state.waiting && status.lastState?.terminated) return 'dead';
  if (status.state.running) return 'alive';
  return 'unknown';
}

/** Parses host and port out of a member's api_url (http://host:port/ha); undefined when malformed. */
export function apiEndpoint(apiUrl: string): { host: string; port: number } | undefined {
  try {
    const url = new URL(apiUrl);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return host && Number.isInteger(port) && port > 0 ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}
