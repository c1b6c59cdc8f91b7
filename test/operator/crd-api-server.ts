import type { DatabaseCluster } from '../../api/crd/types.js';
import { parseDatabaseCluster } from '../../api/crd/validate.js';
import type { Logger } from '../../lib/log.js';
import { installCrds } from '../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';

/** The stand-in's API server with Keelson's CRDs installed, for tests of one reconcile step. */
export interface CrdApiServer {
  server: TestApiServer;
  api: OperatorKubeApi;
  /** Stores a DatabaseCluster (one instance, 1Gi, plus `extra` in its spec) and returns it parsed as the operator reads it. */
  createCluster(name: string, extra?: Record<string, unknown>): Promise<DatabaseCluster>;
  close(): Promise<void>;
}

export async function startCrdApiServer(logger: Logger, namespace = 'default'): Promise<CrdApiServer> {
  const server = await startTestApiServer();
  const api = new OperatorKubeApi(server.kubeConfig);
  await installCrds(server.kubeConfig, logger);
  const createCluster = async (name: string, extra: Record<string, unknown> = {}): Promise<DatabaseCluster> => {
    const body = {
      apiVersion: 'keelson.io/v1',
      kind: 'DatabaseCluster',
      metadata: { name, namespace },
      spec: { instances: 1, storage: { size: '1Gi' }, ...extra },
    };
    return parseDatabaseCluster(
      await api.custom.createNamespacedCustomObject({ group: 'keelson.io', version: 'v1', namespace, plural: 'databaseclusters', body }),
    );
  };
  return { server, api, createCluster, close: () => server.close() };
}
