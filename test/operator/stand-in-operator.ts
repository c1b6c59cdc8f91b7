import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../lib/log.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, eventually } from './support.js';

/** The API server stand-in with the CRDs, one namespace and a leading operator that manages it (no node: no pod runs). */
export interface OperatorOnStandIn {
  server: TestApiServer;
  api: OperatorKubeApi;
  operator: RunningOperator;
  cacheDir: string;
  close(): Promise<void>;
}

export async function startOperatorOnStandIn(namespace: string, identity: string): Promise<OperatorOnStandIn> {
  const server = await startTestApiServer();
  const cacheDir = mkdtempSync(join(tmpdir(), `keelson-${identity}-`));
  const api = new OperatorKubeApi(server.kubeConfig);
  let operator: RunningOperator | undefined;
  const close = async () => {
    await operator?.stop();
    await server.close();
    rmSync(cacheDir, { recursive: true, force: true });
  };
  try {
    await applyCrds(server.kubeconfigPath, cacheDir);
    await api.core.createNamespace({ body: { metadata: { name: namespace } } });
    operator = await runOperator({
      kubeconfig: server.kubeconfigPath,
      namespaces: [namespace],
      leaderElect: true,
      leaseNamespace: 'default',
      leaseName: identity,
      identity,
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      relistIntervalMs: 1_000,
      operatorVersion: '0.0.0-test',
      logger: createLogger({ name: identity, level: process.env.LOG_LEVEL ?? 'silent' }),
    });
    const running = operator;
    await eventually('leadership', async () => running.isLeader(), 15_000);
    return { server, api, operator, cacheDir, close };
  } catch (error) {
    await close();
    throw error;
  }
}
