/**
 * What the fleet benchmark runs instead of kubelets and ha-node: pods that exist and are Ready
 * (no processes, no PostgreSQL), and per cluster one ha-node REST stand-in on a loopback address
 * its pods claim as their IP. It answers just enough for a healthy pass, as a healthy member would:
 * /cluster lists the cluster's members (ordinal 0 the leader, no restart pending), /config takes
 * the operator's PATCH, / says no restart is pending. Calls are counted by path.
 */
import { createServer, type Server } from 'node:http';
import type { AppsV1Api, CoreV1Api, V1StatefulSet } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import { HaNodePaths, Ports } from '../../lib/ports.js';
import { Labels, Roles } from '../../api/naming.js';

/** The address of the n-th cluster's pods and ha-node stand-in (127.86.0.0/16, loopback). */
export function clusterIP(index: number): string {
  return `127.86.${1 + Math.floor(index / 250)}.${1 + (index % 250)}`;
}

export class FakeHaNodes {
  /** "GET /cluster" → calls since the last reset. */
  calls = new Map<string, number>();
  private readonly servers: Server[] = [];

  /** Serves the ha-node API of one cluster (its pods by ordinal) at `host`. */
  async serve(host: string, podNames: string[]): Promise<void> {
    const members = podNames.map((name, ordinal) =>
      ordinal === 0 ? { name, role: 'leader', state: 'running', timeline: 1 } : { name, role: 'replica', state: 'streaming', timeline: 1, lag: 0 },
    );
    const server: Server = createServer((req, res) => {
      req.resume();
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const key = `${req.method} ${path}`;
      this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (path === HaNodePaths.config) return json(200, {});
      if (path === HaNodePaths.cluster) return json(200, { members, scope: 'fleet' });
      if (path === HaNodePaths.node) return json(200, { role: 'primary', state: 'running', pending_restart: false });
      return json(503, { error: 'not served by the fleet benchmark' });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Ports.haNodeApi, host, resolve);
    });
    this.servers.push(server);
  }

  /** The calls counted since the last reset, and a fresh count. */
  reset(): Map<string, number> {
    const calls = this.calls;
    this.calls = new Map();
    return calls;
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Plays the StatefulSet controller and kubelet: for each StatefulSet seen, starts its cluster's
 * ha-node stand-in, makes its pods (ordinal 0 the primary) and reports them Ready at that address.
 * Polls until `statefulSets` are done; returns a stop function.
 */
export function startFakeKubelet(apps: AppsV1Api, core: CoreV1Api, namespace: string, haNodes: FakeHaNodes, statefulSets: number): () => void {
  const done = new Set<string>();
  const addresses = new Map<string, string>();
  let stopped = false;
  const makePods = async (sts: V1StatefulSet) => {
    const name = sts.metadata!.name!;
    const labels = sts.spec?.template.metadata?.labels ?? {};
    const replicas = sts.spec?.replicas ?? 0;
    let podIP = addresses.get(name);
    if (!podIP) {
      podIP = clusterIP(addresses.size);
      addresses.set(name, podIP);
      await haNodes.serve(
        podIP,
        Array.from({ length: replicas }, (_, ordinal) => `${name}-${ordinal}`),
      );
    }
    for (let ordinal = 0; ordinal < replicas; ordinal += 1) {
      const podName = `${name}-${ordinal}`;
      const role = ordinal === 0 ? Roles.primary : Roles.replica;
      const body = {
        metadata: { name: podName, labels: { ...labels, [Labels.role]: role } },
        spec: { containers: [{ name: 'postgres', image: 'fleet-bench' }] },
      };
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
          await Promise.all(
            fresh.slice(i, i + 20).map(async (sts) => {
              await makePods(sts);
              done.add(sts.metadata!.name!);
            }),
          );
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
