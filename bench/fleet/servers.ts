/** The API servers the fleet benchmark runs against: the stand-in in-process, or the oracle's real kube-apiserver. */
import type { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { installCrds } from '../../local/cluster/stack.js';
import { startTestApiServer } from '../../test/support/kube.js';
import { oracleMissing, startOracleApiServer } from '../../test/support/oracle.js';

export interface BenchServer {
  name: string;
  url: string;
  token: string;
  caCert?: string;
  kubeConfig: KubeConfig;
  close(): Promise<void>;
}

export function defaultServerKind(): 'oracle' | 'standin' {
  return oracleMissing() ? 'standin' : 'oracle';
}

export async function startBenchServer(kind: 'oracle' | 'standin'): Promise<BenchServer> {
  const logger = createLogger({ name: 'fleet-bench', level: 'warn' });
  // A watch history long enough that a thousand clusters' churn never expires a watch mid-run.
  // Three ClusterIP Services per cluster: a /16 holds a thousand clusters' (no traffic goes to them).
  const server = kind === 'oracle' ? await startOracleApiServer({ serviceCidr: '10.0.0.0/16' }) : await startTestApiServer({ historyLimit: 200_000 });
  await installCrds(server.kubeConfig, logger);
  return {
    name: kind === 'oracle' ? 'kube-apiserver 1.20 (oracle)' : 'stand-in',
    url: server.url,
    token: server.token,
    caCert: server.caCert,
    kubeConfig: server.kubeConfig,
    close: () => server.close(),
  };
}
