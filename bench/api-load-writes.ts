/**
 * Which writes the API load benchmark saw, and why: a watch on the cluster's Leases (as the
 * benchmark harness, not counted as a member) diffs every new version of a Lease against the one
 * before and names what changed (spec fields, annotations, fields of a member's status record).
 * A leader renewal shows as "spec.renewTime"; a member record rewritten for a moved WAL position
 * as "status.xlog_location". Tallied per object and change while counting is on.
 */
import * as k8s from '@kubernetes/client-node';

type Json = Record<string, unknown>;

function changedKeys(before: Json, after: Json, prefix: string): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key])).map((key) => `${prefix}${key}`);
}

function parse(text: string | undefined): Json | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** What changed from one version of a Lease to the next ("created" for a first version). */
export function describeLeaseChange(before: k8s.V1Lease | undefined, after: k8s.V1Lease): string {
  if (!before) return 'created';
  const changes = changedKeys((before.spec ?? {}) as Json, (after.spec ?? {}) as Json, 'spec.');
  const annotationsBefore = before.metadata?.annotations ?? {};
  const annotationsAfter = after.metadata?.annotations ?? {};
  for (const key of changedKeys(annotationsBefore, annotationsAfter, '')) {
    const statusBefore = parse(annotationsBefore[key]);
    const statusAfter = parse(annotationsAfter[key]);
    // A member's status record: name the fields inside it (heartbeat alone is a refresh).
    if (key === 'status' && statusBefore && statusAfter) changes.push(...changedKeys(statusBefore, statusAfter, 'status.'));
    else changes.push(`annotations.${key}`);
  }
  return changes.length ? changes.sort().join(' ') : 'no change';
}

/** Watches the scope's Leases and tallies "lease name: what changed" while `counting` is on. */
export class LeaseWriteLog {
  private countingSince = 0;
  /** "name: change" → count. */
  readonly changes = new Map<string, number>();
  /** Seconds into the count at which each lease other than the leader changed ("member-x" → [12, 75]). */
  readonly times = new Map<string, number[]>();

  get counting(): boolean {
    return this.countingSince > 0;
  }

  set counting(on: boolean) {
    this.countingSince = on ? Date.now() : 0;
  }
  private readonly versions = new Map<string, k8s.V1Lease>();
  private abort: { abort(): void } | undefined;

  constructor(
    private readonly kubeConfig: k8s.KubeConfig,
    private readonly scope: string,
    private readonly namespace = 'default',
  ) {}

  async start(): Promise<void> {
    const watch = new k8s.Watch(this.kubeConfig);
    this.abort = await watch.watch(
      `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases`,
      { labelSelector: `keelson.io/cluster=${this.scope}` },
      (phase: string, lease: k8s.V1Lease) => this.observe(phase, lease),
      () => undefined,
    );
  }

  stop(): void {
    this.abort?.abort();
  }

  private observe(phase: string, lease: k8s.V1Lease): void {
    const name = lease.metadata?.name;
    if (!name) return;
    const before = this.versions.get(name);
    if (phase === 'DELETED') this.versions.delete(name);
    else this.versions.set(name, lease);
    if (!this.counting) return;
    const change = phase === 'DELETED' ? 'deleted' : describeLeaseChange(before, lease);
    const short = name.replace(`${this.scope}-`, '');
    const key = `${short}: ${change}`;
    this.changes.set(key, (this.changes.get(key) ?? 0) + 1);
    if (short !== 'leader') this.times.set(short, [...(this.times.get(short) ?? []), Math.round((Date.now() - this.countingSince) / 1000)]);
  }
}
