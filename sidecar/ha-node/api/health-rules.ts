import { isTrue } from '../ha/settings.js';
import { isQuorumStandby, isSyncStandby, roleOf, type NodeSnapshot } from '../ha/snapshot.js';
import { parseLag } from './lag.js';

export type Query = Record<string, string | string[] | undefined>;

export class BadQuery extends Error {}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function lagLimit(query: Query, fallback: number): number {
  const raw = first(query.lag);
  if (raw === undefined) return fallback;
  const parsed = parseLag(raw);
  if (parsed === undefined) throw new BadQuery(`invalid lag "${raw}": use bytes or a size such as 16kB, 64MB, 1GB`);
  return parsed;
}

/** Bytes this replica's replay trails the leader position published in the DCS (or its own receive position). */
export function replicationLag(snapshot: NodeSnapshot, mode: 'apply' | 'write' = 'apply'): number {
  const status = snapshot.status;
  if (!status || !status.inRecovery) return 0;
  const leaderOptime = snapshot.cluster?.leaderRecord?.optime ?? 0;
  const target = Math.max(leaderOptime, status.receivedLocation ?? 0);
  const position = mode === 'write' ? (status.receivedLocation ?? status.replayedLocation ?? 0) : (status.replayedLocation ?? 0);
  return Math.max(0, target - position);
}

/** Patroni's replica check: running replica, not noloadbalance, within lag, in the asked replication state. */
function replicaOk(snapshot: NodeSnapshot, query: Query): boolean {
  const status = snapshot.status;
  if (!status || roleOf(snapshot) !== 'replica') return false;
  if (isTrue(snapshot.tags.noloadbalance)) return false;
  if (replicationLag(snapshot) > lagLimit(query, Number.POSITIVE_INFINITY)) return false;
  const wanted = first(query.replication_state);
  if (wanted !== undefined && status.replicationState !== wanted) return false;
  return true;
}

/** tag_<key>=<value> filters: every named tag must be set (not false) and equal as lower-case strings. */
function tagsMatch(snapshot: NodeSnapshot, query: Query): boolean {
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('tag_')) continue;
    const tag = snapshot.tags[key.slice(4)];
    if (tag === undefined || tag === null || tag === false) return false;
    const wanted = first(raw) ?? '';
    if (String(tag).toLowerCase() !== wanted.toLowerCase()) return false;
  }
  return true;
}

const primaryPaths = new Set(['/', '/primary', '/master', '/read-write']);

/**
 * Status code of a health endpoint for this snapshot. Unknown paths answer 503, as Patroni's
 * generic GET does. Throws BadQuery for an unparsable lag.
 */
export function healthStatus(path: string, query: Query, snapshot: NodeSnapshot): number {
  // The lock and a running primary server both: a crashed primary that still holds the lock is
  // 503 while it restarts (clients routed there would only be refused), and so is a primary
  // demoted for lack of DCS contact (running read-only).
  const leader = snapshot.isLeader && snapshot.status !== undefined && roleOf(snapshot) === 'primary';
  // The standby leader (Patroni 4.1): a leader for /leader and the read-only family, never a primary or a replica.
  const standbyLeader = roleOf(snapshot) === 'standby_leader';
  const reader = leader || standbyLeader;
  const running = snapshot.status !== undefined;
  const ok = (condition: boolean): number => (condition ? 200 : 503);
  if (primaryPaths.has(path)) return ok(leader);
  switch (path) {
    case '/leader':
      return ok(snapshot.isLeader);
    case '/standby-leader':
    case '/standby_leader':
      return ok(standbyLeader);
    case '/replica':
      return ok(!leader && replicaOk(snapshot, query) && tagsMatch(snapshot, query));
    case '/read-only':
      return ok(reader || (replicaOk(snapshot, query) && tagsMatch(snapshot, query)));
    case '/sync':
    case '/synchronous':
      return ok(!leader && replicaOk(snapshot, query) && isSyncStandby(snapshot) && tagsMatch(snapshot, query));
    case '/read-only-sync':
    case '/read-only-synchronous':
      return ok(reader || (replicaOk(snapshot, query) && isSyncStandby(snapshot) && tagsMatch(snapshot, query)));
    case '/quorum':
      return ok(!leader && replicaOk(snapshot, query) && isQuorumStandby(snapshot) && tagsMatch(snapshot, query));
    case '/read-only-quorum':
      return ok(reader || (replicaOk(snapshot, query) && isQuorumStandby(snapshot) && tagsMatch(snapshot, query)));
    case '/async':
    case '/asynchronous':
      return ok(
        !leader &&
          snapshot.cluster !== undefined &&
          replicaOk(snapshot, query) &&
          !isSyncStandby(snapshot) &&
          !isQuorumStandby(snapshot) &&
          tagsMatch(snapshot, query),
      );
    case '/health':
      return ok(running);
    case '/readiness':
      return readiness(snapshot, query);
    default:
      return 503;
  }
}

function readiness(snapshot: NodeSnapshot, query: Query): number {
  const status = snapshot.status;
  if (status && snapshot.isLeader && (roleOf(snapshot) === 'primary' || roleOf(snapshot) === 'standby_leader')) return 200;
  if (!status || status.replicationState !== 'streaming') return 503;
  const modeRaw = first(query.mode) ?? 'apply';
  if (modeRaw !== 'apply' && modeRaw !== 'write') throw new BadQuery(`invalid mode "${modeRaw}": use apply or write`);
  const limit = lagLimit(query, snapshot.config.maximum_lag_on_failover);
  return replicationLag(snapshot, modeRaw) <= limit ? 200 : 503;
}

/**
 * /liveness: the loop completed a cycle, or the cycle in progress made progress (a PostgreSQL tool
 * such as pg_rewind running), within ttl (running primary) or 2*ttl (everyone else); never runs
 * SQL. Demotion, crash recovery and rewind run inside one cycle that may last far longer than ttl.
 */
export function livenessStatus(snapshot: NodeSnapshot, nowMs = performance.now()): number {
  if (snapshot.paused) return 200;
  const primary = snapshot.isLeader && snapshot.status !== undefined && !snapshot.status.inRecovery;
  const limit = (primary ? 1 : 2) * snapshot.config.ttl * 1000;
  const aliveAt = Math.max(snapshot.lastLoopAt, snapshot.lastProgressAt ?? 0);
  return nowMs - aliveAt > limit ? 503 : 200;
}
