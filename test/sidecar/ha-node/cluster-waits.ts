import type { Member, TestCluster } from './harness.js';

/**
 * Waits the ha-node fault tests share on top of harness.ts: a settled cluster, a replica that has
 * taken over, and a former primary streaming again.
 */

/** The primary once there is one and every other member streams from it. */
export async function settledPrimary(cluster: TestCluster): Promise<Member> {
  const primary = await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
  const replicas = cluster.members.length - 1;
  await cluster.waitFor(
    `${replicas} streaming replicas`,
    async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === replicas;
    },
    60_000,
  );
  return primary;
}

/** The first of `candidates` found writable. */
export function writableAmong(cluster: TestCluster, candidates: Member[], what: string, timeoutMs: number): Promise<Member> {
  return cluster.waitFor(
    what,
    async () => {
      for (const m of candidates) if (await m.isWritable()) return m;
      return undefined;
    },
    timeoutMs,
  );
}

/** Waits until `member` reports itself a streaming replica. */
export async function streamingAgain(cluster: TestCluster, member: Member, what: string, timeoutMs: number): Promise<void> {
  await cluster.waitFor(what, async () => (await member.status('/replica?replication_state=streaming')) === 200, timeoutMs);
}
