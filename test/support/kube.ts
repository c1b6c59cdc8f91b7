import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../../local/apiserver/server.js';

export type TestApiServer = RunningApiServer & { kubeConfig: k8s.KubeConfig };

/**
 * A throwaway Kubernetes API server stand-in (HTTPS, free loopback port, temp dir) with a
 * client-node KubeConfig loaded from the kubeconfig file it wrote. Call close() in `after`.
 */
export async function startTestApiServer(options: ApiServerOptions = {}): Promise<TestApiServer> {
  const server = await startApiServer({ logger: quietLogger(), ...options });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  return Object.assign(server, { kubeConfig });
}

/** A KubeConfig for the same server under another identity (bearer token), e.g. to refuse one client. */
export function kubeConfigAs(server: RunningApiServer, token: string, path: string): k8s.KubeConfig {
  server.writeKubeconfig(path, { token });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** A MicroTime value for Lease fields, as client-node expects (`new V1MicroTime()`). */
export function microTime(date = new Date()): k8s.V1MicroTime {
  return new k8s.V1MicroTime(date.getTime());
}

/** Server logs are noise in test output unless LOG_LEVEL asks for them. */
function quietLogger() {
  return createLogger({ name: 'local-apiserver', level: process.env.LOG_LEVEL ?? 'warn' });
}
