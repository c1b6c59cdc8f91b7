import { z } from 'zod';
import { RoleNames } from '../naming.js';
import { managedRolesProblems } from './managed-roles.js';
import { apiVersion, databaseClusterSpecSchema, databaseClusterStatusSchema, kind, type ClusterMetadata, type DatabaseCluster } from './types.js';

/** Longest cluster name: leaves room for "-<ordinal>" pods and "-headless"/"-replication" names within 63. */
export const maxClusterNameLength = 40;

/** Cluster names are RFC 1035 labels: they prefix Service names, which must be RFC 1035 labels too. */
export const clusterNamePattern = '^[a-z]([-a-z0-9]*[a-z0-9])?$';

export class InvalidSpecError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid DatabaseCluster: ${issues.join('; ')}`);
    this.name = 'InvalidSpecError';
  }
}

function formatIssue(issue: z.core.$ZodIssue): string {
  const path = ['spec', ...issue.path.map(String)].join('.');
  return `${path}: ${issue.message}`;
}

/**
 * Parses a raw object from the API server into a DatabaseCluster with defaults applied. Repeats
 * the CRD's CEL rules so an API server without CEL support cannot hand the operator a spec
 * the schema forbids.
 */
export function parseDatabaseCluster(raw: unknown): DatabaseCluster {
  if (typeof raw !== 'object' || raw === null) throw new InvalidSpecError(['object expected']);
  const object = raw as { metadata?: Partial<ClusterMetadata>; spec?: unknown; status?: unknown };
  const metadata = object.metadata ?? {};
  if (!metadata.name || !metadata.namespace || !metadata.uid) throw new InvalidSpecError(['metadata.name, namespace and uid are required']);
  const issues: string[] = [];
  if (metadata.name.length > maxClusterNameLength) issues.push(`metadata.name: must be at most ${maxClusterNameLength} characters`);
  if (!new RegExp(clusterNamePattern).test(metadata.name))
    issues.push(`metadata.name: must be an RFC 1035 label (lower-case letters, digits and "-", starting with a letter): ${clusterNamePattern}`);
  const parsed = databaseClusterSpecSchema.safeParse(object.spec ?? {});
  if (!parsed.success) throw new InvalidSpecError([...issues, ...parsed.error.issues.map(formatIssue)]);
  const spec = parsed.data;
  if (spec.ha.loopWait + 2 * spec.ha.retryTimeout > spec.ha.ttl) issues.push('spec.ha: loopWait + 2*retryTimeout must be <= ttl');
  if (spec.ha.synchronousMode !== 'off' && spec.ha.synchronousNodeCount >= spec.instances) {
    issues.push('spec.ha.synchronousNodeCount must be less than instances when synchronousMode is not off');
  }
  if ((Object.values(RoleNames) as string[]).includes(spec.bootstrap.owner))
    issues.push('spec.bootstrap: bootstrap.owner must not be postgres, replicator or keelson_pooler');
  if (spec.switchover.targetInstance && !spec.switchover.targetInstance.startsWith(`${metadata.name}-`)) {
    issues.push(`spec.switchover.targetInstance must name an instance of this cluster (${metadata.name}-N)`);
  }
  issues.push(...backupIssues(spec, metadata.name, metadata.namespace));
  for (const problem of managedRolesProblems(spec.roles, spec.bootstrap.owner)) issues.push(`spec.roles.${problem.path.join('.')}: ${problem.message}`);
  if (spec.bootstrap.recovery && spec.replica) issues.push('spec: a standby cluster (replica) is cloned from its source, not restored (bootstrap.recovery)');
  const source = spec.replica?.source;
  if (source?.cluster === metadata.name && (source.namespace ?? metadata.namespace) === metadata.namespace) {
    issues.push('spec.replica.source.cluster: a cluster cannot be a standby of itself');
  }
  if (issues.length > 0) throw new InvalidSpecError(issues);
  const status = databaseClusterStatusSchema.safeParse(object.status ?? {});
  return {
    apiVersion,
    kind,
    metadata: metadata as ClusterMetadata,
    spec,
    status: status.success ? status.data : {},
  };
}

/** Rules across spec.backup and spec.bootstrap.recovery (the first is also CEL in the CRD). */
function backupIssues(spec: DatabaseCluster['spec'], name: string, namespace: string): string[] {
  const issues: string[] = [];
  const names = (spec.backup?.repositories ?? []).map((r) => r.name);
  if (new Set(names).size !== names.length) issues.push('spec.backup.repositories: names must be unique');
  const fromRepository = spec.replica?.source.repository;
  if (fromRepository !== undefined && !names.includes(fromRepository)) issues.push('spec.replica.source.repository must name one of backup.repositories');
  const recovery = spec.bootstrap.recovery;
  if (!recovery) return issues;
  if (!names.includes(recovery.repository)) issues.push('spec.bootstrap.recovery.repository must name one of backup.repositories');
  if (recovery.source.cluster === name && (recovery.source.namespace ?? namespace) === namespace) {
    issues.push('spec.bootstrap.recovery.source.cluster: a cluster cannot be restored from its own stanza; restore into a new cluster name');
  }
  return issues;
}
