import { Watch, type V1Pod } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { group, plural, version } from '../../api/crd/types.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { isPodReady } from '../../operator/reconcile/status.js';
import { Labels, names, podSelector, selectorString } from '../../api/naming.js';
import { connectOutcome } from '../support/ports.js';
import type { ServiceResolver } from './e2e-support.js';

/** What a client saw the moment a cluster's Ready condition turned True. */
export interface ReadyMoment {
  /** `<name>-rw` accepted a TCP connection right then. */
  rwAccepts: boolean;
  /** What the connection attempt met: accepted, refused (nothing listening: no endpoint), timeout. */
  rwOutcome: string;
  rwAddress?: string;
  /** The status's Ready message, and the pods as the API server had them then (for failure messages). */
  message: string;
  pods: string[];
}

type Watched = { status?: { conditions?: Array<{ type: string; status: string; message?: string }> } };

export interface ReadyWatch {
  /** The first Ready=True. */
  first: Promise<ReadyMoment>;
  /** Every turn of Ready to True seen so far, checked in order. */
  moments(): Promise<ReadyMoment[]>;
  stop(): void;
}

async function rwEndpoints(api: OperatorKubeApi, namespace: string, service: string): Promise<string> {
  const endpoints = await api.core.readNamespacedEndpoints({ namespace, name: service }).catch(() => undefined);
  const subsets = endpoints?.subsets ?? [];
  const ready = subsets.flatMap((s) => s.addresses ?? []).map((a) => a.ip);
  const notReady = subsets.flatMap((s) => s.notReadyAddresses ?? []).map((a) => a.ip);
  return `${service}: ready [${ready.join(' ')}] not ready [${notReady.join(' ')}] (rv ${endpoints?.metadata?.resourceVersion ?? '-'})`;
}

/**
 * Watches a DatabaseCluster (a watch, not polling: each Ready=True is seen as the operator writes
 * it) and, whenever Ready turns True, tries a TCP connection to `<name>-rw` the way a client that
 * ran `kubectl wait --for=condition=Ready` would next. A watch the server ends is opened again.
 */
export async function watchReady(api: OperatorKubeApi, namespace: string, name: string, resolve: ServiceResolver): Promise<ReadyWatch> {
  let settleFirst: (moment: ReadyMoment) => void = () => undefined;
  let failFirst: (error: Error) => void = () => undefined;
  const first = new Promise<ReadyMoment>((ok, ko) => {
    settleFirst = ok;
    failFirst = ko;
  });
  first.catch(() => undefined); // read by the test that awaits it; a late failure must not go unhandled
  const checks: Array<Promise<ReadyMoment>> = [];
  let wasReady = false;
  let stopped = false;
  let request: AbortController | undefined;

  const check = async (message: string): Promise<ReadyMoment> => {
    const rwAddress = await resolve(api, namespace, names(name).rwService);
    // A connection to a listening address completes at once; the generous timeout only keeps a
    // busy test process (the stand-in runs in it) from reading a late 'connect' as a refusal.
    const rwOutcome = rwAddress === undefined ? 'no address' : await connectOutcome(rwAddress, Ports.postgres, 5_000);
    const rwAccepts = rwOutcome === 'accepted';
    const pods = (await api.listPods(namespace, selectorString(podSelector(name)))).map(
      (pod: V1Pod) => `${pod.metadata?.name}@${pod.status?.podIP ?? '-'}:${pod.metadata?.labels?.[Labels.role] ?? '-'}${isPodReady(pod) ? '' : '(not ready)'}`,
    );
    // On a refusal, what the Endpoints controller had published for -rw then (ready and not-ready addresses).
    if (!rwAccepts) pods.push(`endpoints ${await rwEndpoints(api, namespace, names(name).rwService)}`);
    return { rwAccepts, rwOutcome, ...(rwAddress ? { rwAddress } : {}), message, pods };
  };
  const open = async (): Promise<void> => {
    request = await new Watch(api.kubeConfig).watch(
      `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
      { fieldSelector: `metadata.name=${name}` },
      (_type: string, object: Watched) => {
        const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
        const isReady = ready?.status === 'True';
        if (isReady && !wasReady && !stopped) {
          const moment = check(ready.message ?? '');
          if (checks.length === 0) moment.then(settleFirst, failFirst);
          checks.push(moment);
        }
        wasReady = isReady;
      },
      () => {
        if (!stopped) open().catch((error: Error) => failFirst(error));
      },
    );
  };
  await open();
  return {
    first,
    moments: () => Promise.all(checks),
    stop: () => {
      stopped = true;
      request?.abort();
    },
  };
}
