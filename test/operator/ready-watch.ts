import { Watch, type V1Pod } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import { group, plural, version } from '../../operator/api/types.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { isPodReady } from '../../operator/reconcile/status.js';
import { Labels, names, podSelector, selectorString } from '../../operator/naming.js';
import { acceptsConnection } from '../support/ports.js';
import type { ServiceResolver } from './e2e-support.js';

/** What a client saw the moment a cluster's Ready condition first turned True. */
export interface FirstReady {
  /** `<name>-rw` accepted a TCP connection right then. */
  rwAccepts: boolean;
  rwAddress?: string;
  /** The status's Ready message, and the pods as the API server had them then (for the failure message). */
  message: string;
  pods: string[];
}

type Watched = { status?: { conditions?: Array<{ type: string; status: string; message?: string }> } };

/**
 * Watches a DatabaseCluster (a watch, not polling: the first Ready=True is seen as the operator
 * writes it) and, at the first Ready=True, tries a TCP connection to `<name>-rw` the way a client
 * that ran `kubectl wait --for=condition=Ready` would next. Resolves with what it found.
 */
export async function watchFirstReady(api: OperatorKubeApi, namespace: string, name: string, resolve: ServiceResolver): Promise<{ seen: Promise<FirstReady>; stop(): void }> {
  let settle: (first: FirstReady) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const seen = new Promise<FirstReady>((ok, ko) => {
    settle = ok;
    fail = ko;
  });
  let done = false;
  const check = async (message: string): Promise<void> => {
    const rwAddress = await resolve(api, namespace, names(name).rwService);
    const rwAccepts = rwAddress !== undefined && (await acceptsConnection(rwAddress, Ports.postgres, 1_000));
    const pods = (await api.listPods(namespace, selectorString(podSelector(name)))).map(
      (pod: V1Pod) => `${pod.metadata?.name}:${pod.metadata?.labels?.[Labels.role] ?? '-'}${isPodReady(pod) ? '' : '(not ready)'}`,
    );
    settle({ rwAccepts, ...(rwAddress ? { rwAddress } : {}), message, pods });
  };
  const request = await new Watch(api.kubeConfig).watch(
    `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, object: Watched) => {
      const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
      if (done || ready?.status !== 'True') return;
      done = true;
      check(ready.message ?? '').catch((error: Error) => fail(error));
    },
    (error: unknown) => {
      if (!done) fail(error instanceof Error ? error : new Error(`watch on ${name} ended before Ready`));
    },
  );
  return {
    seen,
    stop: () => {
      done = true;
      request.abort();
    },
  };
}
