import { createLogger } from '../../lib/log.js';
import { startLocalStack } from '../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { loadKubeConfig } from '../../lib/kube/client.js';
const logger = createLogger({ name: 'probe', level: 'warn' });
const stack = await startLocalStack({ dir: '/tmp/op-e2e/run', logger, operatorVersion: '0.1.0', ipPrefix: '127.0.3' });
const api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
await api.custom.createNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace: 'default', plural: 'databaseclusters', body: { apiVersion: 'keelson.io/v1', kind: 'DatabaseCluster', metadata: { name: 'demo' }, spec: { instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } } } });
const start = Date.now();
while (Date.now() - start < 150_000) {
  await new Promise((r) => setTimeout(r, 3000));
  const c = await api.readCluster('default', 'demo');
  const pods = await api.core.listNamespacedPod({ namespace: 'default' });
  console.log(Math.round((Date.now() - start) / 1000), (c?.status as {phase?: string})?.phase, (c?.status as {currentPrimary?: string})?.currentPrimary, pods.items.map((p) => `${p.metadata?.name}:${p.status?.phase}:${p.metadata?.labels?.['keelson.io/role'] ?? '-'}:${p.status?.containerStatuses?.map((s) => `${s.name}=${s.ready}/${s.restartCount}`).join(',')}`).join(' '));
  if ((c?.status as {phase?: string})?.phase === 'Healthy') break;
}
await stack.close();
