import { namesIn, planSyncStandbys, strictPlaceholder } from '../../ops/sync-names.js';

/**
 * Quorum commit (`synchronous_mode: quorum`, see ADR 0602). Two halves describe who holds every
 * acknowledged commit:
 * - PostgreSQL: `ANY k (S)`, a commit waits for k members of S;
 * - the DCS sync key: voters V and quorum q, a racer must see q + 1 voters (itself included)
 *   and be at least as far as each of them.
 * Safe when every possible ack set meets every possible set of q + 1 voters. Each step changes one
 * half only and keeps that true: raising a number goes first, lowering it goes last (adding a
 * member raises q in the DCS before PostgreSQL learns it; removing one shrinks PostgreSQL first).
 */
export interface QuorumState {
  /** PostgreSQL side: how many acknowledgements a commit needs and from whom. */
  numsync: number;
  sync: string[];
  /** DCS side. */
  quorum: number;
  voters: string[];
}

export type QuorumStep =
  { kind: 'none' } | { kind: 'dcs'; voters: string[]; quorum: number } | { kind: 'names'; names: string; numsync: number; sync: string[] };

/** Every set of numsync members of sync meets every set of quorum + 1 voters. */
export function quorumSafe(state: QuorumState): boolean {
  const voters = new Set(state.voters);
  const outside = state.sync.filter((name) => !voters.has(name)).length;
  const insideAcks = Math.max(0, state.numsync - outside);
  return insideAcks + state.quorum + 1 > voters.size;
}

/** Reads `ANY k (...)` (or anything else) as the PostgreSQL half; the strict placeholder counts as a name. */
export function pgHalf(standbyNames: string): Pick<QuorumState, 'numsync' | 'sync'> {
  const parsed = namesIn(standbyNames);
  if (parsed.method === 'none') return { numsync: 0, sync: [] };
  const placeholder = standbyNames.includes(strictPlaceholder) ? [strictPlaceholder] : [];
  return { numsync: parsed.count, sync: [...parsed.names, ...placeholder] };
}

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

export interface QuorumInput {
  /** synchronous_standby_names in force. */
  currentNames: string;
  /** The sync key when this leader wrote it (voters and quorum), else undefined. */
  key: { voters: string[]; quorum: number } | undefined;
  /** Eligible streaming standbys, best first. */
  active: string[];
  nodeCount: number;
  strict: boolean;
}

/**
 * The next single step towards the optimal state (S = V = active, k = min(count, |active|),
 * q = |active| - k). A key written by another leader is first replaced by an empty one of ours
 * (voters none, quorum 0: only this leader may then win a race, which any PostgreSQL setting
 * allows). When neither half can move to the target safely, the DCS half first takes the
 * lock-out quorum (q = |V|, nobody can gather enough votes), then PostgreSQL moves, then q drops.
 */
export function nextQuorumStep(input: QuorumInput): QuorumStep {
  if (!input.key) return { kind: 'dcs', voters: [], quorum: 0 };
  const plan = planSyncStandbys('quorum', input.strict, input.active, input.nodeCount);
  const targetPg = pgHalf(plan.standbyNames);
  const target: QuorumState = { ...targetPg, voters: plan.syncStandby, quorum: plan.quorum ?? 0 };
  const current: QuorumState = { ...pgHalf(input.currentNames), voters: input.key.voters, quorum: input.key.quorum };
  const pgDone = current.numsync === target.numsync && sameSet(current.sync, target.sync);
  const dcsDone = current.quorum === target.quorum && sameSet(current.voters, target.voters);
  if (pgDone && dcsDone) return { kind: 'none' };
  const dcsStep: QuorumStep = { kind: 'dcs', voters: target.voters, quorum: target.quorum };
  const pgStep: QuorumStep = { kind: 'names', names: plan.standbyNames, numsync: target.numsync, sync: target.sync };
  if (!dcsDone && quorumSafe({ ...current, voters: target.voters, quorum: target.quorum })) return dcsStep;
  if (!pgDone && quorumSafe({ ...current, numsync: target.numsync, sync: target.sync })) return pgStep;
  return { kind: 'dcs', voters: target.voters, quorum: target.voters.length };
}
