import * as k8s from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isIPv6 } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where Kubernetes mounts a pod's service account (token, ca.crt, namespace). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** No way to reach a Kubernetes API was found; the message says how to give one. */
export class KubeNotConfiguredError extends Error {
  override readonly name = 'KubeNotConfiguredError';
}

export interface KubeSources {
  /** `--kubeconfig` (one file, or several joined by the path delimiter); else $KUBECONFIG. */
  kubeconfig?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
  serviceAccountDir?: string;
}

const HOW_TO = 'run in a pod (its service account is used), or give a kubeconfig with --kubeconfig <file> or the KUBECONFIG environment variable';

/**
 * Picks the Kubernetes API to talk to, in the order kubectl users expect: --kubeconfig, then
 * $KUBECONFIG; the in-cluster service account when running in a pod; ~/.kube/config. Unlike client-node's loadFromDefault,
 * finding none is an error saying so, not a fallback to http://localhost:8080 (which client-node
 * then refuses with an unrelated message about skipTLSVerify).
 */
export function loadKubeConfig(sources: KubeSources = {}): k8s.KubeConfig {
  const env = sources.env ?? process.env;
  const kubeConfig = new k8s.KubeConfig();
  const explicit = sources.kubeconfig ?? env.KUBECONFIG;
  if (explicit) {
    const files = explicit.split(delimiter).filter(Boolean);
    const missing = files.filter((file) => !existsSync(file));
    if (missing.length) throw new KubeNotConfiguredError(`kubeconfig ${missing.join(', ')} does not exist; ${HOW_TO}`);
    // Several files merge as kubectl merges them: the first file to name an entry (and the first
    // current context) wins, where client-node's mergeConfig would throw on the duplicate.
    kubeConfig.loadFromFile(files[0]);
    for (const file of files.slice(1)) {
      const more = new k8s.KubeConfig();
      more.loadFromFile(file);
      const has = (list: { name: string }[], name: string): boolean => list.some((entry) => entry.name === name);
      for (const c of more.getClusters()) if (!has(kubeConfig.getClusters(), c.name)) kubeConfig.addCluster(c);
      for (const u of more.getUsers()) if (!has(kubeConfig.getUsers(), u.name)) kubeConfig.addUser(u);
      for (const x of more.getContexts()) if (!has(kubeConfig.getContexts(), x.name)) kubeConfig.addContext(x);
    }
    return kubeConfig;
  }
  const accountDir = sources.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST;
  if (host && existsSync(join(accountDir, 'token'))) {
    loadInCluster(kubeConfig, host, env.KUBERNETES_SERVICE_PORT ?? '443', accountDir);
    return kubeConfig;
  }
  const userConfig = join(sources.home ?? homedir(), '.kube', 'config');
  if (existsSync(userConfig)) {
    kubeConfig.loadFromFile(userConfig);
    return kubeConfig;
  }
  const why = host
    ? `KUBERNETES_SERVICE_HOST is set but ${accountDir}/token is missing (automountServiceAccountToken off?)`
    : 'not in a pod, no KUBECONFIG, no ~/.kube/config';
  throw new KubeNotConfiguredError(`no Kubernetes API is configured (${why}): ${HOW_TO}`);
}

/** client-node's loadFromCluster, with the directory and environment given rather than global. */
function loadInCluster(kubeConfig: k8s.KubeConfig, host: string, port: string, accountDir: string): void {
  const namespaceFile = join(accountDir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'inCluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: join(accountDir, 'ca.crt'), skipTLSVerify: false }],
    // The token file is re-read as the kubelet rotates it (client-node's tokenFile provider).
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: join(accountDir, 'token') } } }],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
    currentContext: 'inClusterContext',
  });
}
