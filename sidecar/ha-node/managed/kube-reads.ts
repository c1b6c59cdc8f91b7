import * as k8s from '@kubernetes/client-node';
import { describeApiError, isNotFound, withRequestTimeout } from '../../../lib/kube/client.js';
import { SharedAgents } from '../../../lib/kube/keep-alive.js';
import type { Logger } from '../../../lib/log.js';
import { databasePlural, parseDatabaseObject, type DatabaseObject } from '../../../api/crd/database-kind.js';
import { group, version } from '../../../api/crd/types.js';
import { WatchedDatabases } from './database-watch.js';
import type { SecretPassword } from './role-plan.js';

/**
 * The two Kubernetes reads the managed roles and databases need, and nothing else: the password
 * Secrets spec.roles names (a GET each: the Role grants `get` on those names only) and the
 * cluster's Database objects (watched in the namespace, kept to spec.cluster == this cluster).
 */

/** One Secret as the plan uses it, with the version the secret watch compares. */
export interface SecretRead {
  password: SecretPassword;
  resourceVersion: string;
}

/** A Database object that could not be parsed (its name and why), reported in its place. */
export interface UnreadableDatabase {
  name: string;
  uid: string;
  message: string;
}

export interface ManagedKubeReads {
  secret(name: string, role: string): Promise<SecretRead>;
  databases(): Promise<{ objects: DatabaseObject[]; unreadable: UnreadableDatabase[] }>;
  stop?(): void;
}

const basicAuth = 'kubernetes.io/basic-auth';

/** The password a basic-auth Secret holds for `role`, or what is wrong with the Secret. */
export function secretPassword(secret: Pick<k8s.V1Secret, 'type' | 'data'>, name: string, role: string): SecretPassword {
  if (secret.type !== basicAuth) return { problem: `Secret "${name}" must be of type ${basicAuth} (it is ${secret.type ?? 'Opaque'})` };
  const decode = (key: string) => (secret.data?.[key] === undefined ? undefined : Buffer.from(secret.data[key]!, 'base64').toString('utf8'));
  const username = decode('username');
  const password = decode('password');
  if (username !== undefined && username !== role) return { problem: `Secret "${name}" is for user "${username}", not for role "${role}"` };
  if (!password) return { problem: `Secret "${name}" has no password` };
  return { password };
}

export class KubeManagedReads implements ManagedKubeReads {
  private readonly core: k8s.CoreV1Api;
  private readonly custom: k8s.CustomObjectsApi;
  private readonly agents = new SharedAgents();
  private readonly watch: WatchedDatabases;
  private readonly timeoutMs: number;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly namespace: string,
    private readonly cluster: string,
    options: { onChange: () => void; logger: Logger; timeoutMs?: number },
  ) {
    this.core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.watch = new WatchedDatabases(
      kubeConfig,
      `/apis/${group}/${version}/namespaces/${namespace}/${databasePlural}`,
      (resourceVersion) => this.list(resourceVersion),
      cluster,
      options.onChange,
      options.logger,
    );
  }

  private async list(resourceVersion: string): Promise<{ items: k8s.KubernetesObject[]; resourceVersion: string }> {
    const list = (await this.custom.listNamespacedCustomObject(
      { group, version, namespace: this.namespace, plural: databasePlural, ...(resourceVersion ? { resourceVersion } : {}) },
      withRequestTimeout(this.timeoutMs, this.agents.middleware()),
    )) as { items?: k8s.KubernetesObject[]; metadata?: { resourceVersion?: string } };
    return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  stop(): void {
    this.watch.stop();
    this.agents.destroy();
  }

  async secret(name: string, role: string): Promise<SecretRead> {
    try {
      const secret = await this.core.readNamespacedSecret({ name, namespace: this.namespace }, withRequestTimeout(this.timeoutMs, this.agents.middleware()));
      return { password: secretPassword(secret, name, role), resourceVersion: secret.metadata?.resourceVersion ?? '' };
    } catch (error) {
      const problem = isNotFound(error) ? `Secret "${name}" not found` : `cannot read Secret "${name}": ${describeApiError(error)}`;
      return { password: { problem }, resourceVersion: `error:${problem}` };
    }
  }

  async databases(): Promise<{ objects: DatabaseObject[]; unreadable: UnreadableDatabase[] }> {
    const items: unknown[] = this.watch.cached() ?? (await this.list('')).items;
    const objects: DatabaseObject[] = [];
    const unreadable: UnreadableDatabase[] = [];
    for (const item of items) {
      const cluster = (item as { spec?: { cluster?: unknown } }).spec?.cluster;
      if (cluster !== this.cluster) continue;
      const parsed = parseDatabaseObject(item);
      if (parsed.ok) objects.push(parsed.value);
      else {
        const metadata = (item as { metadata?: { name?: string; uid?: string } }).metadata;
        unreadable.push({ name: metadata?.name ?? '', uid: metadata?.uid ?? '', message: parsed.message });
      }
    }
    return { objects, unreadable };
  }
}
