/**
 * What the fleet benchmark runs instead of kubelets and ha-node: pods that exist and are Ready
 * (no processes, no PostgreSQL), and one ha-node REST stand-in on a loopback address every pod
 * claims as its IP. It answers just enough for a healthy pass: /cluster is unavailable (status
 * falls back to pod labels), /config takes the operator's PATCH, and no restart is pending.
 */
import { createServer, type Server } from 'node:http';
import type { AppsV1Api, CoreV1Api, V1StatefulSet } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { HaNodePaths, Ports } from '../../lib/ports.js';
import { Labels, Roles } from '../../operator/naming.js';

export async function startFakeHaNode(host: string): Promise<() => Promise<void>> {
  const server: Server = createServer((req, res) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === HaNodePaths.config) return json(200, {});
    if (path === HaNodePaths.node) return json(200, { role: 'primary', state: 'running', pending_restart: false });
    return json(503, { error: 'not served by the fleet benchmark' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Ports.haNodeApi, host, resolve);
  });
  return () => new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Plays the StatefulSet controller and kubelet: for each StatefulSet seen, makes its pods (ordinal
 * 0 the primary) and reports them Ready at `podIP`. Polls until `statefulSets` are done; returns a
 * stop function.
 */
export function startFakeKubelet(apps: AppsV1Api, core: CoreV1Api, namespace: string, podIP: string, statefulSets: number): () => void {
  const done = new Set<string>();
  let stopped = false;
  const makePods = async (sts: V1StatefulSet) => {
    const name = sts.metadata!.name!;
    const labels = sts.spec?.template.metadata?.labels ?? {};
    for (let ordinal = 0; ordinal < (sts.spec?.replicas ?? 0); ordinal += 1) {
      const podName = `${name}-${ordinal}`;
      const role = ordinal === 0 ? Roles.primary : Roles.replica;
      const body = { metadata: { name: podName, labels: { ...labels, [Labels.role]: role } }, spec: { containers: [{ name: 'postgres', image: 'fleet-bench' }] } };
      const created = await core.createNamespacedPod({ namespace, body }).catch(async (err: unknown) => {
        if (apiStatusCode(err) !== 409) throw err;
        return core.readNamespacedPod({ namespace, name: podName }); // made by an earlier, interrupted round
      });
      created.status = { phase: 'Running', podIP, conditions: [{ type: 'Ready', status: 'True' }] };
      await core.replaceNamespacedPodStatus({ namespace, name: podName, body: created });
    }
  };
  const loop = async () => {
    // Listing a thousand StatefulSets twice a second would load the machine the operator is measured on.
    while (!stopped && done.size < statefulSets) {
      try {
        const fresh = (await apps.listNamespacedStatefulSet({ namespace })).items.filter((s) => !done.has(s.metadata!.name!));
        for (let i = 0; i < fresh.length; i += 20) {
          await Promise.all(fresh.slice(i, i + 20).map(async (sts) => {
            await makePods(sts);
            done.add(sts.metadata!.name!);
          }));
        }
      } catch {
        // the next round retries what failed
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}
