/**
 * Kubeconfigs for containers: the node's shared one (its own credentials, certificates inlined)
 * and, like a kubelet's projected ServiceAccount token, one per pod holding a token from a
 * TokenRequest for the pod's service account bound to the pod, so every pod reaches the API server
 * under its own identity.
 */
import { readFileSync } from 'node:fs';
import { chmod, chown, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import type { Logger } from '../../lib/log.js';
import type { LocalUser } from './pod-worker.js';

/**
 * A pod's token lives as long as a kubelet's extended-expiration projected token (a year): the
 * node does not rotate it, and containers read their kubeconfig once.
 */
const podTokenSeconds = 365 * 24 * 3600;

/** A kubeconfig document for the node's cluster: the node's own user, or only `token` when given. */
export function kubeconfigDocument(kc: k8s.KubeConfig, token?: string): Record<string, unknown> {
  const inline = (file: string | undefined, data: string | undefined): string | undefined => data ?? (file ? readFileSync(file).toString('base64') : undefined);
  const cluster = kc.getCurrentCluster();
  const current = kc.getCurrentUser();
  const user =
    token !== undefined
      ? { token }
      : {
          token: current?.token,
          'client-certificate-data': inline(current?.certFile, current?.certData),
          'client-key-data': inline(current?.keyFile, current?.keyData),
        };
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'local',
    clusters: [
      {
        name: 'local',
        cluster: {
          server: cluster?.server,
          'certificate-authority-data': inline(cluster?.caFile, cluster?.caData),
          'insecure-skip-tls-verify': cluster?.skipTLSVerify || undefined,
        },
      },
    ],
    users: [{ name: 'local', user }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'local' } }],
  };
}

/** Writes `<dir>/kubeconfig` readable by root and the non-root account's group only (0640). */
export async function writeKubeconfigFile(dir: string, doc: Record<string, unknown>, user: LocalUser | undefined): Promise<string> {
  const path = join(dir, 'kubeconfig');
  await writeFile(path, YAML.stringify(doc), { mode: 0o640 });
  await chmod(path, 0o640);
  if (user) await chown(path, 0, user.gid);
  return path;
}

/** Issues each pod its own kubeconfig; undefined (use the shared one) when the API server gives no token. */
export class PodCredentials {
  private fallbackLogged = false;

  constructor(
    private readonly core: k8s.CoreV1Api,
    private readonly kubeConfig: k8s.KubeConfig,
    private readonly user: LocalUser | undefined,
    private readonly logger: Logger,
  ) {}

  async kubeconfigFor(pod: k8s.V1Pod, podDir: string): Promise<string | undefined> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const serviceAccount = pod.spec?.serviceAccountName || 'default';
    let token: string | undefined;
    try {
      const answer = await this.core.createNamespacedServiceAccountToken({
        name: serviceAccount,
        namespace,
        body: { spec: { audiences: [], expirationSeconds: podTokenSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid } } },
      });
      token = answer.status?.token || undefined;
    } catch (err) {
      // No such ServiceAccount, or a server that does not sign tokens: the shared kubeconfig will do.
      if (!this.fallbackLogged)
        this.logger.debug(
          { pod: `${namespace}/${name}`, serviceAccount, err: (err as Error).message },
          "no ServiceAccount token for the pod; containers get the node's kubeconfig (logged once)",
        );
      this.fallbackLogged = true;
      return undefined;
    }
    if (token === undefined) return undefined;
    return writeKubeconfigFile(podDir, kubeconfigDocument(this.kubeConfig, token), this.user);
  }
}
