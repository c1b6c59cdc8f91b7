/**
 * Endpoints controller: keeps the Endpoints object of every Service with a selector in line with
 * the pods it selects. Services without a selector are left alone (their Endpoints are managed by
 * someone else, as on a real cluster).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { WorkQueue, isConflict, isNotFound, objectKey, splitKey, startInformer } from './kube.js';
import { endpointsFor, endpointsSignature } from './endpoints.js';
import type { Controller } from './statefulset-controller.js';

export async function startEndpointsController(kc: k8s.KubeConfig, logger: Logger): Promise<Controller> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const log = logger.child({ controller: 'endpoints' });
  const managed = new Set<string>();

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    let service: k8s.V1Service | undefined;
    try {
      service = await core.readNamespacedService({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const selector = service?.spec?.selector;
    const gone = !service || service.metadata?.deletionTimestamp !== undefined;
    if (!service || gone || !selector || Object.keys(selector).length === 0) {
      // Endpoints of a deleted Service go with it; a Service that lost its selector keeps what we
      // wrote last only if someone else took over, so drop ours once.
      if (gone || managed.has(key)) {
        managed.delete(key);
        await core.deleteNamespacedEndpoints({ name, namespace }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }
      return;
    }
    managed.add(key);
    const labelSelector = Object.entries(selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = await core.listNamespacedPod({ namespace, labelSelector });
    const desired = endpointsFor(service, pods.items);
    let existing: k8s.V1Endpoints | undefined;
    try {
      existing = await core.readNamespacedEndpoints({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      try {
        await core.createNamespacedEndpoints({ namespace, body: desired });
      } catch (err) {
        if (!isConflict(err)) throw err;
        queue.add(key);
      }
      return;
    }
    if (endpointsSignature(existing) === endpointsSignature(desired)) return;
    // PUT with the read resourceVersion: a concurrent writer makes this a 409 and a retry.
    await core.replaceNamespacedEndpoints({
      name,
      namespace,
      body: { ...desired, metadata: { ...existing.metadata, labels: desired.metadata?.labels } },
    });
    log.debug({ service: key }, 'endpoints updated');
  }

  const queue = new WorkQueue(reconcile, log, 300);
  const services = await startInformer(kc, '/api/v1/services', () => core.listServiceForAllNamespaces(), { onChange: (s) => queue.add(objectKey(s)) }, log);
  const enqueueNamespace = (namespace: string | undefined): void => {
    for (const service of services.list(namespace)) queue.add(objectKey(service));
  };
  const pods = await startInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces(), { onChange: (pod) => enqueueNamespace(pod.metadata?.namespace) }, log);
  const endpoints = await startInformer(
    kc,
    '/api/v1/endpoints',
    () => core.listEndpointsForAllNamespaces(),
    {
      onChange: (ep) => {
        if (services.get(ep.metadata?.name ?? '', ep.metadata?.namespace)) queue.add(objectKey(ep));
      },
    },
    log,
  );
  queue.startResync(() => services.list().map(objectKey), 10_000);
  return {
    async close() {
      queue.stop();
      await Promise.all([services.stop(), pods.stop(), endpoints.stop()]);
      await queue.idle();
    },
  };
}
