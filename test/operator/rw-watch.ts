import type { V1Pod } from '@kubernetes/client-node';
import { names } from '../../api/naming.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import type { ConnectionOptions } from 'node:tls';
import type { ClusterDriver } from './e2e-support.js';
import { clusterCa, podName, superuserClient, verifyFull } from './cluster-tls.js';

/**
 * Watches how a cluster's `-rw` Service routes while faults happen: every ~100 ms it reads the
 * Service's Endpoints (or, given `rwBackends`, what the service proxy itself routes to), the
 * leader Lease and the DatabaseCluster status, and asks each pod over a fresh connection whether
 * it takes writes. A sample is "stale" when -rw lists an address whose server answered that it
 * is in recovery, or that did not answer and is not the Lease holder's (a cut-off old primary).
 * The holder's server not answering within the probe's timeout on a loaded machine is no
 * evidence that -rw points at the wrong server, so it does not count.
 */

/** How long after the election -rw may still list a read-only server: label write → Endpoints → proxy, plus sampling. */
export const staleRoutingBudgetMs = 2500;

/** Where -rw routes now (pod addresses), when read from somewhere other than the Endpoints. */
export type RwBackends = () => string[];
export interface RoutingSample {
  at: number;
  /** Addresses -rw routes to. */
  rw: string[];
  /** Pod addresses whose server accepted a write session. */
  writable: string[];
  /** Pod addresses whose server answered the probe at all (writable or in recovery). */
  answered: string[];
  holder?: string;
  /** The Lease holder's pod address. */
  holderIp?: string;
  statusPrimary?: string;
  readyReason?: string;
}

export interface RoutingSummary {
  samples: RoutingSample[];
  /** First sample at which `holder` held the Lease and its server took writes. */
  electedAt?: number;
  /** Time after electedAt during which -rw listed a non-writable address. */
  staleMs: number;
  /** Time after electedAt during which the status named someone else than the Lease holder. */
  statusWrongMs: number;
  /** Time after electedAt during which the status said NoPrimary. */
  noPrimaryMs: number;
}

/** Each cluster's server CA, read once per run of the watch's process. */
const caOf = new Map<string, string>();

/** true: takes writes; false: in recovery; undefined: no answer within the timeout. */
async function writableAt(host: string, password: string, ssl: ConnectionOptions): Promise<boolean | undefined> {
  const client = superuserClient(host, password, ssl, { connectMs: 800, queryMs: 800 });
  try {
    await client.connect();
    const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return rows[0]?.r === false;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function sample(
  api: OperatorKubeApi,
  driver: ClusterDriver,
  namespace: string,
  cluster: string,
  password: string,
  pods: V1Pod[],
  rwBackends?: RwBackends,
): Promise<RoutingSample> {
  // Verified TLS (every remote session needs it), against the cluster CA.
  let ca = caOf.get(`${namespace}/${cluster}`);
  const at = Date.now();
  const proxied = rwBackends?.();
  const [endpoints, lease, status] = await Promise.all([
    api.core.readNamespacedEndpoints({ namespace, name: names(cluster).rwService }).catch(() => undefined),
    api.coordination.readNamespacedLease({ namespace, name: names(cluster).leaderLease }).catch(() => undefined),
    driver.status().catch(() => undefined),
  ]);
  const members = pods.filter((p) => p.status?.podIP !== undefined && p.metadata?.name !== undefined);
  const ips = members.map((p) => p.status!.podIP!);
  if (ca === undefined) {
    ca = await clusterCa(api, namespace, cluster).catch(() => undefined);
    if (ca !== undefined) caOf.set(`${namespace}/${cluster}`, ca);
  }
  const answers = await Promise.all(
    members.map((p) => (ca ? writableAt(p.status!.podIP!, password, verifyFull(ca, podName(namespace, cluster, p.metadata!.name!))) : undefined)),
  );
  const holder = lease?.spec?.holderIdentity || undefined;
  return {
    at,
    rw: proxied ?? (endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)),
    writable: ips.filter((_, i) => answers[i] === true),
    answered: ips.filter((_, i) => answers[i] !== undefined),
    holder,
    holderIp: pods.find((p) => p.metadata?.name === holder)?.status?.podIP,
    statusPrimary: status?.currentPrimary,
    readyReason: status?.conditions?.find((c) => c.type === 'Ready')?.reason,
  };
}

/** Time covered by the samples (each lasting until the next) after `from` for which `bad` holds. */
function durationWhere(samples: RoutingSample[], from: number, bad: (s: RoutingSample) => boolean): number {
  let total = 0;
  for (let i = 0; i + 1 < samples.length; i += 1) {
    const current = samples[i]!;
    if (current.at >= from && bad(current)) total += samples[i + 1]!.at - current.at;
  }
  return total;
}

/** -rw lists a server known not to take writes: it answered in recovery, or it is silent and not the holder's. */
export function isStale(s: RoutingSample): boolean {
  return s.rw.some((ip) => !s.writable.includes(ip) && (s.answered.includes(ip) || ip !== s.holderIp));
}

/** One line per sample, times relative to the first, for assertion messages. */
export function timelineOf(samples: RoutingSample[]): string {
  const start = samples[0]?.at ?? 0;
  return samples
    .map(
      (s) =>
        `${s.at - start} rw=${s.rw.join('+')} writable=${s.writable.join('+')} silent=${s.rw.filter((ip) => !s.answered.includes(ip)).join('+')} holder=${s.holder} status=${s.statusPrimary}/${s.readyReason}`,
    )
    .join('\n');
}

/** Time after `from` during which -rw listed a server known not to take writes. */
export function staleSince(samples: RoutingSample[], from: number): number {
  return durationWhere(samples, from, isStale);
}

export function summarize(samples: RoutingSample[], oldPrimary: string, ipOf: (pod: string) => string | undefined): RoutingSummary {
  const elected = samples.find((s) => s.holder !== undefined && s.holder !== oldPrimary && s.writable.includes(ipOf(s.holder) ?? ''));
  if (!elected) return { samples, staleMs: 0, statusWrongMs: 0, noPrimaryMs: 0 };
  const from = elected.at;
  return {
    samples,
    electedAt: from,
    staleMs: staleSince(samples, from),
    statusWrongMs: durationWhere(samples, from, (s) => s.statusPrimary !== s.holder),
    noPrimaryMs: durationWhere(samples, from, (s) => s.readyReason === 'NoPrimary'),
  };
}

/** Samples until stop() is called; `pods` are read once (their addresses do not change here). */
export function watchRouting(
  api: OperatorKubeApi,
  driver: ClusterDriver,
  namespace: string,
  cluster: string,
  password: string,
  pods: V1Pod[],
  rwBackends?: RwBackends,
) {
  const samples: RoutingSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      samples.push(await sample(api, driver, namespace, cluster, password, pods, rwBackends));
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - started))));
    }
  })();
  return {
    samples,
    async stop(): Promise<RoutingSample[]> {
      running = false;
      await loop;
      return samples;
    },
  };
}
