/** Client traffic for the outage tests: a settled cluster, a writer with -rw probes, the timeline. */
import type { Member, TestCluster } from './harness.js';

export async function settled(cluster: TestCluster, replicas: number): Promise<Member> {
  const primary = await cluster.waitFor(`a primary in ${cluster.scope}`, () => cluster.primary(), 120_000);
  await cluster.waitFor(
    `${replicas} streaming replicas in ${cluster.scope}`,
    async () => {
      const codes = await Promise.all(cluster.members.map((m) => m.status('/replica?replication_state=streaming')));
      return codes.filter((c) => c === 200).length === replicas;
    },
    90_000,
  );
  return primary;
}

/**
 * Writes every 50 ms until `until`; counts attempts and failures. Beside it, every 250 ms, it asks
 * what the kubelet and the -rw Service ask (/primary, /readiness): any other answer than 200 would
 * take the primary out of -rw, a client-visible outage although PostgreSQL still takes writes. The
 * probes run on their own clock so a loaded machine's slow writes do not thin them out.
 */
export async function keepWriting(
  member: Member,
  until: number,
): Promise<{ attempts: number; failures: number; sawActive: boolean; probes: number; notPrimary: string[] }> {
  let attempts = 0;
  let failures = 0;
  let sawActive = false;
  let probes = 0;
  const notPrimary: string[] = [];
  const startedAt = Date.now();
  const write = async () => {
    while (Date.now() < until) {
      attempts += 1;
      await member.query('INSERT INTO beats VALUES (now())').catch(() => (failures += 1));
      if (!sawActive && attempts % 20 === 0) sawActive = (await member.get('/ha').catch(() => undefined))?.json().failsafe_mode_is_active === true;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const probe = async () => {
    while (Date.now() < until) {
      const round = Date.now();
      probes += 1;
      for (const path of ['/primary', '/readiness']) {
        const code = await member.status(path).catch(() => 0);
        if (code !== 200) notPrimary.push(`${path} ${code} at ${Date.now() - startedAt} ms`);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 250 - (Date.now() - round))));
    }
  };
  await Promise.all([write(), probe()]);
  return { attempts, failures, sawActive, probes, notPrimary };
}

export function timelineOf(member: Member): Promise<number> {
  return member.query<{ tli: number }>("SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli").then((rows) => rows[0]!.tli);
}

/**
 * Asks every member every 50 ms until `until` whether a fresh session there is writable: how many
 * rounds, the rounds in which two or more were, and the rounds in which each member was.
 */
export async function sampleWritable(
  members: Member[],
  until: number,
): Promise<{ rounds: number; splitRounds: string[]; writableRounds: Record<string, number> }> {
  let rounds = 0;
  const splitRounds: string[] = [];
  const writableRounds: Record<string, number> = Object.fromEntries(members.map((m) => [m.name, 0]));
  const startedAt = Date.now();
  while (Date.now() < until) {
    const round = Date.now();
    const writable = await Promise.all(members.map((m) => m.isWritable()));
    rounds += 1;
    const writers = members.filter((_, i) => writable[i]).map((m) => m.name);
    for (const name of writers) writableRounds[name] += 1;
    if (writers.length > 1) splitRounds.push(`${writers.join('+')} at ${round - startedAt} ms`);
    await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - round))));
  }
  return { rounds, splitRounds, writableRounds };
}
