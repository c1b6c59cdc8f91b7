import { namesIn, planSyncStandbys } from '../../ops/sync-names.js';

/** One eligible streaming standby as pg_stat_replication shows it on the primary. */
export interface StandbyRow {
  name: string;
  flushLsn: number;
  syncState: string;
}

export interface SyncInput {
  /** Standbys in the sync key, when this leader wrote it; [] otherwise. */
  published: string[];
  /** Whether the sync key currently names this member as its leader. */
  keyIsOurs: boolean;
  /** synchronous_standby_names in force on the primary. */
  currentNames: string;
  strict: boolean;
  nodeCount: number;
  /** Eligible streaming standbys (members, not nosync). */
  streaming: StandbyRow[];
  /** Primary flush LSN when synchronous_standby_names last changed (0 when unknown). */
  changeLsn: number;
}

export type SyncStep =
  | { kind: 'none' }
  /** Write the key (only the standbys that stay), then set the names and note the flush LSN. */
  | { kind: 'change-names'; key: string[]; names: string; chosen: string[] }
  /** Publish these standbys in the key (they hold every acknowledged commit). */
  | { kind: 'publish'; key: string[] };

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

/** Same method, count and set of names (the order inside FIRST n (...) only reflects who was ahead). */
function sameNames(current: string, wanted: string): boolean {
  if (current === wanted) return true;
  const a = namesIn(current);
  const b = namesIn(wanted);
  return a.method === b.method && a.count === b.count && sameSet(a.names, b.names) && current.includes('placeholder') === wanted.includes('placeholder');
}

/**
 * The next step of the leader's synchronous-standby upkeep (FIRST n, optionally strict). The key
 * shrinks before synchronous_standby_names changes and grows only when every chosen standby is
 * `sync` and has flushed past the change point, so it never names a standby that may lack an
 * acknowledged commit.
 */
export function nextSyncStep(input: SyncInput): SyncStep {
  // Keep already-published standbys first (no needless churn), then the most advanced.
  const ordered = [...input.streaming]
    .sort((a, b) => Number(input.published.includes(b.name)) - Number(input.published.includes(a.name)) || b.flushLsn - a.flushLsn)
    .map((row) => row.name);
  const plan = planSyncStandbys('on', input.strict, ordered, input.nodeCount);
  const keep = input.published.filter((name) => plan.syncStandby.includes(name));
  if (!sameNames(input.currentNames, plan.standbyNames)) return { kind: 'change-names', key: keep, names: plan.standbyNames, chosen: plan.syncStandby };
  if (input.keyIsOurs && sameSet(input.published, plan.syncStandby)) return { kind: 'none' };
  const ready = plan.syncStandby.every((name) => {
    const row = input.streaming.find((r) => r.name === name);
    return row !== undefined && row.syncState === 'sync' && row.flushLsn >= input.changeLsn;
  });
  if (ready) return { kind: 'publish', key: plan.syncStandby };
  if (!input.keyIsOurs || !sameSet(input.published, keep)) return { kind: 'publish', key: keep };
  return { kind: 'none' };
}
