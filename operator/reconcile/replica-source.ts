import type { V1Secret, V1Service } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { ReplicaSource } from '../../api/crd/replica-types.js';
import type { StandbyTarget } from '../builders/context.js';
import { names, SecretKeys } from '../../api/naming.js';
import type { ReconcileDeps } from './deps.js';
import { BuildRefusedError } from './refusals.js';
import { sourceTlsData, type SourceTlsData } from './source-tls.js';

/**
 * Resolves spec.replica.source into what ha-node needs: the address its standby leader streams
 * from (a DatabaseCluster's -rw Service cluster IP, or host:port) and the credentials the standby
 * cluster must share with the source (its replication user; for a DatabaseCluster also the
 * superuser, whose password the cloned data directory carries). What cannot work — a missing
 * source, a chain of standbys leading back here, missing credentials — is a refusal: condition
 * Applied=False and a Warning Event, and no pod is created that would initdb a cluster of its own.
 */

export interface Credentials {
  username: string;
  password: string;
}

export interface ResolvedReplicaSource {
  target: StandbyTarget;
  replication: Credentials;
  superuser?: Credentials;
  /** A DatabaseCluster source's replication client Secret, copied for the standby (source-tls.ts). */
  tls?: SourceTlsData;
}

/** How many standby hops are followed when looking for a cycle. */
const maxChain = 16;

interface RawReplica {
  enabled?: boolean;
  source?: Partial<ReplicaSource>;
}

/** The next cluster a raw DatabaseCluster follows as a standby (undefined: none, or not a cluster source). */
export function followedCluster(raw: { metadata?: { namespace?: string }; spec?: { replica?: RawReplica } }): { namespace: string; name: string } | undefined {
  const replica = raw.spec?.replica;
  if (!replica || replica.enabled === false || !replica.source?.cluster) return undefined;
  return { namespace: replica.source.namespace ?? raw.metadata?.namespace ?? '', name: replica.source.cluster };
}

/** What the standby follows, as status shows it. */
export function describeReplicaSource(cluster: DatabaseCluster): string | undefined {
  const source = cluster.spec.replica?.source;
  if (!source) return undefined;
  const followed = source.cluster
    ? `${source.namespace ?? cluster.metadata.namespace}/${source.cluster}`
    : source.host !== undefined
      ? `${source.host}:${source.port ?? Ports.postgres}`
      : undefined;
  const archive = source.repository !== undefined ? `repository ${source.repository} (stanza ${source.stanza ?? source.cluster})` : undefined;
  return [followed, archive].filter((part) => part !== undefined).join(' and ');
}

export interface ResolveOptions {
  /** The source follows this cluster on purpose (a controlled swap under way): no cycle. */
  swapping?: boolean;
  /** This cluster's database system identifier, once it has data (compared with a DatabaseCluster source's). */
  systemIdentifier?: string;
}

/** Called while the cluster is, or becomes, a standby (reconcile/replica-role.ts decides). */
export async function resolveReplicaSource(
  deps: ReconcileDeps,
  cluster: DatabaseCluster,
  options: ResolveOptions = {},
): Promise<ResolvedReplicaSource | undefined> {
  const replica = cluster.spec.replica;
  if (!replica) return undefined;
  const { source } = replica;
  const archive = source.repository !== undefined ? { repository: true } : {};
  if (source.host !== undefined || source.cluster === undefined) {
    const replication = await readCredentials(deps, cluster.metadata.namespace, source.credentialsSecret!, 'replica.source.credentialsSecret');
    return { target: { ...(source.host !== undefined ? { host: source.host, port: source.port ?? Ports.postgres } : {}), ...archive }, replication };
  }
  const namespace = source.namespace ?? cluster.metadata.namespace;
  const name = source.cluster!;
  if (options.swapping) await requireCluster(deps, namespace, name);
  else await refuseCycle(deps, cluster, namespace, name);
  await refuseOtherSystem(deps, namespace, name, options.systemIdentifier);
  const sourceNames = names(name);
  const service = await deps.api.read<V1Service>({ apiVersion: 'v1', kind: 'Service', metadata: { name: sourceNames.rwService, namespace } });
  const host = service?.spec?.clusterIP;
  if (!host || host === 'None')
    throw new BuildRefusedError(`replica.source: DatabaseCluster ${namespace}/${name} has no ${sourceNames.rwService} Service address yet`);
  const replication = await readCredentials(deps, namespace, sourceNames.replicationSecret, `replica.source (${namespace}/${name})`);
  const superuser = await readCredentials(deps, namespace, sourceNames.superuserSecret, `replica.source (${namespace}/${name})`);
  const tls = sourceTlsData(
    await deps.api.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: sourceNames.replicationTlsSecret, namespace } }),
  );
  // The source's server certificate names its -rw Service; the Service's address is dialled (no DNS needed).
  const serverName = `${sourceNames.rwService}.${namespace}.svc`;
  return { target: { host, port: Ports.postgres, serverName, ...archive }, replication, superuser, ...(tls ? { tls } : {}) };
}

async function requireCluster(deps: ReconcileDeps, namespace: string, name: string): Promise<void> {
  if (!(await deps.api.readCluster(namespace, name))) throw new BuildRefusedError(`replica.source: DatabaseCluster ${namespace}/${name} does not exist`);
}

/**
 * A standby replays its source's WAL, which only works on a copy of the same database system:
 * following another one would stop a running primary for nothing (its WAL receiver is refused).
 */
async function refuseOtherSystem(deps: ReconcileDeps, namespace: string, name: string, own: string | undefined): Promise<void> {
  if (own === undefined) return; // not cloned yet: the clone will carry the source's identifier
  const raw = await deps.api.readCluster(namespace, name);
  const theirs = (raw?.status as { systemIdentifier?: string } | undefined)?.systemIdentifier;
  if (theirs !== undefined && theirs !== own) {
    throw new BuildRefusedError(
      `replica.source: DatabaseCluster ${namespace}/${name} has database system identifier ${theirs}, this cluster ${own}: a standby must be a copy of its source`,
    );
  }
}

async function refuseCycle(deps: ReconcileDeps, cluster: DatabaseCluster, namespace: string, name: string): Promise<void> {
  const self = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
  const chain = [self];
  let next: { namespace: string; name: string } | undefined = { namespace, name };
  for (let hop = 0; next && hop < maxChain; hop += 1) {
    const key = `${next.namespace}/${next.name}`;
    const raw = await deps.api.readCluster(next.namespace, next.name);
    if (!raw) {
      if (hop === 0) throw new BuildRefusedError(`replica.source: DatabaseCluster ${key} does not exist`);
      return;
    }
    chain.push(key);
    next = followedCluster(raw as Parameters<typeof followedCluster>[0]);
    if (next && `${next.namespace}/${next.name}` === self)
      throw new BuildRefusedError(`replica.source: ${[...chain, self].join(' → ')} is a cycle of standby clusters`);
  }
}

async function readCredentials(deps: ReconcileDeps, namespace: string, secretName: string, what: string): Promise<Credentials> {
  const secret = await deps.api.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName, namespace } });
  if (!secret) throw new BuildRefusedError(`${what}: Secret ${namespace}/${secretName} does not exist`);
  const decode = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  const username = decode(SecretKeys.username);
  const password = decode(SecretKeys.password);
  if (!username || !password)
    throw new BuildRefusedError(`${what}: Secret ${namespace}/${secretName} needs the keys ${SecretKeys.username} and ${SecretKeys.password}`);
  return { username, password };
}
