import * as k8s from '@kubernetes/client-node';
import { describeApiError, loadKubeConfig } from '../lib/kube/client.js';
import { names, SecretKeys } from '../api/naming.js';
import { Label, memberFromLease } from '../sidecar/ha-node/dcs/lease-codec.js';
import type { ApiCredentials } from '../api/ha-node/credentials.js';
import { apiBase, callMember, jsonOf, UnreachableError, type ClientOptions } from './client.js';
import { MemberAddressRefused } from './member-route.js';
import type { MemberNames } from './member-tls.js';
import { ctlClusterDocumentSchema, fitAnswer, type CtlClusterDocument } from '../api/ha-node/rest-documents.js';

/** GET /cluster as ctl reads it (api/ha-node/rest-documents.ts). */
export type ClusterDocument = CtlClusterDocument;
export type ClusterMember = CtlClusterDocument['members'][number];

export interface TargetOptions {
  /** Member API URLs given on the command line (skip the Kubernetes lookup). */
  urls: string[];
  scope?: string;
  namespace: string;
  kubeconfig?: string;
}

/** Member API bases: the --url values, else the api_url of every member Lease of the cluster. */
export async function memberBases(target: TargetOptions, memberNames?: MemberNames): Promise<string[]> {
  if (target.urls.length > 0) return target.urls.map((u) => u.replace(/\/+$/, ''));
  if (!target.scope) throw new UnreachableError('give the cluster name (--cluster or KEELSON_CLUSTER) or member URLs (--url)');
  const kubeConfig = loadKubeConfig({ kubeconfig: target.kubeconfig });
  const api = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  let leases: k8s.V1Lease[];
  try {
    leases = (await api.listNamespacedLease({ namespace: target.namespace, labelSelector: `${Label.cluster}=${target.scope}` })).items;
  } catch (error) {
    throw new UnreachableError(`cannot list the cluster's Leases: ${describeApiError(error)}`);
  }
  const members = leases
    .filter((l) => l.metadata?.labels?.[Label.dcsKey] === 'member')
    .map((l) => memberFromLease(l))
    .filter((m): m is NonNullable<typeof m> => Boolean(m?.api_url))
    .sort((a, b) => a.name.localeCompare(b.name));
  memberNames?.remember(members);
  const bases = members.map((m) => apiBase(m.api_url));
  if (bases.length === 0) throw new UnreachableError(`no members of cluster "${target.scope}" found in namespace ${target.namespace}`);
  return bases;
}

/**
 * The REST API credentials from the Secret the operator creates for the cluster, so that a user
 * with a kubeconfig that may read it needs no --username/--password. Undefined when the Secret
 * is absent or unreadable (RBAC): mutating calls then fail with the member's 401, which says why.
 */
export async function credentialsFromClusterSecret(target: TargetOptions): Promise<ApiCredentials | undefined> {
  if (target.urls.length > 0 || !target.scope) return undefined;
  try {
    const api = loadKubeConfig({ kubeconfig: target.kubeconfig }).makeApiClient(k8s.CoreV1Api);
    const secret = await api.readNamespacedSecret({ name: names(target.scope).apiSecret, namespace: target.namespace });
    const decode = (key: string): string | undefined => {
      const value = secret.data?.[key];
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    };
    const password = decode(SecretKeys.password);
    return password === undefined ? undefined : { username: decode(SecretKeys.username) ?? 'keelson', password };
  } catch {
    return undefined;
  }
}

/** GET /cluster from the first member that answers. */
export async function readCluster(bases: string[], options: ClientOptions): Promise<{ cluster: ClusterDocument; via: string }> {
  const errors: string[] = [];
  for (const base of bases) {
    try {
      const cluster = fitAnswer(
        ctlClusterDocumentSchema,
        jsonOf<unknown>(await callMember(base, 'GET', '/cluster', undefined, options), 'GET /cluster'),
        'GET /cluster',
      );
      options.names?.remember(cluster.members);
      return { cluster, via: base };
    } catch (error) {
      if (error instanceof MemberAddressRefused) throw error; // every member would be refused the same way
      errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  throw new UnreachableError(`no member answered: ${errors.join('; ')}`);
}

export function leaderOf(cluster: ClusterDocument): ClusterMember | undefined {
  return cluster.members.find((m) => m.role === 'leader' || m.role === 'standby_leader');
}

export function memberNamed(cluster: ClusterDocument, name: string): ClusterMember {
  const member = cluster.members.find((m) => m.name === name);
  if (!member) throw new Error(`${name} is not a member of the cluster (members: ${cluster.members.map((m) => m.name).join(', ')})`);
  return member;
}
