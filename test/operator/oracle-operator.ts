import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api } from '@kubernetes/client-node';
import { apiStatusCode } from '../../lib/kube/client.js';
import type { Logger } from '../../lib/log.js';
import { renderKubeconfig } from '../../local/apiserver/security/kubeconfig.js';
import { installCrds } from '../../local/cluster/stack.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import type { OracleApiServer } from '../support/oracle.js';
import { deleteCluster, grantOperatorRules, type ClusterDriver } from './e2e-support.js';
import { eventually } from './support.js';

/**
 * What the operator's end-to-end runs on the real kube-apiserver (e2e-oracle, e2e-real-control-plane)
 * share: the operator as a user holding only its RBAC rules, started the way both start it, and
 * a cluster's deletion left to the server's garbage collector.
 */

/** Writes the kubeconfig of `user` (bearer `token`) under `dir`, grants that user operatorRules() and installs the CRDs; the kubeconfig's path. */
export async function operatorAccess(oracle: OracleApiServer, dir: string, user: string, token: string, logger: Logger): Promise<string> {
  const kubeconfig = join(dir, 'operator-kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ server: oracle.url, caCert: oracle.caCert, token, contextName: 'operator' }), { mode: 0o600 });
  await grantOperatorRules(oracle.kubeConfig, user);
  await installCrds(oracle.kubeConfig, logger);
  return kubeconfig;
}

/** The operator watching every namespace, leading through the Lease keelson-operator in `leaseNamespace`, probes and metrics on free loopback ports. */
export function startLeadingOperator(
  kubeconfig: string,
  leaseNamespace: string,
  identity: string,
  relistIntervalMs: number,
  logger: Logger,
): Promise<RunningOperator> {
  return runOperator({
    kubeconfig,
    namespaces: [],
    leaderElect: true,
    leaseNamespace,
    leaseName: 'keelson-operator',
    identity,
    health: { host: '127.0.0.1', port: 0 },
    metrics: { host: '127.0.0.1', port: 0 },
    relistIntervalMs,
    operatorVersion: '0.1.0',
    logger: logger.child({ component: 'operator' }),
  });
}

/** Deletes the cluster (no Leases left behind), then waits until the garbage collector removed its StatefulSet and pods. */
export async function deleteAndCollect(
  api: OperatorKubeApi,
  oracle: OracleApiServer,
  namespace: string,
  name: string,
  driver: ClusterDriver,
  waits: { statefulSetMs: number; podsMs: number },
): Promise<void> {
  await deleteCluster(api, namespace, name, driver);
  const apps = oracle.kubeConfig.makeApiClient(AppsV1Api);
  await eventually(
    'StatefulSet collected',
    async () =>
      apps.readNamespacedStatefulSet({ namespace, name }).then(
        () => false,
        (err: unknown) => apiStatusCode(err) === 404,
      ),
    waits.statefulSetMs,
  );
  await eventually('pods gone', async () => (await driver.pods()).length === 0, waits.podsMs);
}
