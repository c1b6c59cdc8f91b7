/**
 * Partition soak (not a test). A 3-member synchronous cluster on the local stack in namespace mode
 * (ADR 0354); ROUNDS rounds of each fault on the primary (full cut, API-only cut, peers-only cut)
 * and of a full cut of the synchronous standby, each held for 2 × ttl and then healed. Prints one
 * line per round and a table per fault: rounds, split-brain instants, lost acknowledged commits,
 * failover time (cut → the successor's first commit), for a primary that keeps its lock the time
 * until it commits again (synchronous mode drops the standbys it cannot reach), how long -rw
 * routed to a server that took no writes after the election (after the cut for a standby) and
 * time to Healthy after the heal.
 * Needs root; runs itself inside a fresh isolated network namespace.
 * Run: node --import tsx bench/partition-soak.ts   (ROUNDS=3, TTL=10)
 */
import { fileURLToPath } from 'node:url';
import { createLogger } from '../lib/log.js';
import { insideIsolatedRun, runIsolated } from '../local/node/netns/isolated-run.js';
import { assertIsolated } from '../local/node/netns/isolation.js';
import { cutFromApiServer, cutFromEverything, cutFromPeers } from '../local/node/netns/partition.js';
import { nodeSubnet } from '../local/node/netns/subnet.js';
import { faultRound, startPartitionCluster, type RoundOutcome } from '../test/operator/partition-round.js';
import { median } from './stats.js';

const rounds = Number(process.env.ROUNDS ?? 3);
const ttlSeconds = Number(process.env.TTL ?? 10);
const subnet = nodeSubnet('10.213.30');

if (!insideIsolatedRun()) {
  process.exit(await runIsolated([process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url)]));
}
await assertIsolated();

const cluster = await startPartitionCluster({
  podNetwork: subnet.prefix,
  ttlSeconds,
  logger: createLogger({ name: 'partition-soak', level: process.env.LOG_LEVEL ?? 'silent' }),
});
const peersOf = (pod: string): string[] => cluster.members.filter((m) => m.name !== pod).map((m) => m.ip);
// A primary cut from its peers only keeps its lease (it still reaches the API server): no failover is due.
const faults: Array<{ name: string; failover: boolean; victim?: 'sync standby'; cut: (path: string, primary: string) => Promise<unknown> }> = [
  { name: 'full cut', failover: true, cut: (path) => cutFromEverything(path) },
  { name: 'API-only cut', failover: true, cut: (path) => cutFromApiServer(path, subnet) },
  { name: 'peers-only cut', failover: false, cut: (path, primary) => cutFromPeers(path, peersOf(primary)) },
  { name: 'standby full cut', failover: false, victim: 'sync standby', cut: (path) => cutFromEverything(path) },
];
/** -rw time on a server that took no writes: after the election, or after the cut when none was due. */
const staleMs = (o: RoundOutcome): number => (o.routing.electedAt !== undefined ? o.routing.staleMs : o.staleAfterCutMs);
const results = new Map<string, Array<RoundOutcome | Error>>();
let nextId = 1;
try {
  for (let round = 1; round <= rounds; round += 1) {
    for (const fault of faults) {
      const primary = (await cluster.driver.status()).currentPrimary ?? '';
      const outcome = await faultRound(
        { ...cluster, firstId: nextId, healthyTimeoutMs: 120_000, expectFailover: fault.failover, victim: fault.victim },
        (path) => fault.cut(path, primary),
      ).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      nextId += 100_000;
      results.set(fault.name, [...(results.get(fault.name) ?? []), outcome]);
      const line =
        outcome instanceof Error
          ? `failed: ${outcome.message}`
          : `${outcome.victim} cut, ${outcome.old} → ${outcome.successor}, -rw stale ${(staleMs(outcome) / 1000).toFixed(1)} s, failover ${outcome.failoverMs === undefined ? 'none' : `${(outcome.failoverMs / 1000).toFixed(1)} s`}${outcome.primaryResumedMs === undefined ? '' : `, primary commits again after ${(outcome.primaryResumedMs / 1000).toFixed(1)} s`}, Healthy ${(outcome.healthyAfterHealMs / 1000).toFixed(1)} s after heal, acknowledged ${outcome.acknowledged}, lost ${outcome.missing.length}, split-brain ${outcome.splitBrains.length}`;
      console.log(`round ${round} ${fault.name}: ${line}`);
    }
  }
} finally {
  await cluster.close();
}

const medianSeconds = (values: number[]): string => (values.length === 0 ? '-' : (median(values) / 1000).toFixed(1));
const max = (values: number[]): string => (values.length === 0 ? '-' : (Math.max(...values) / 1000).toFixed(1));
console.log(`\nttl ${ttlSeconds} s, synchronous mode on, faults held 2 × ttl`);
console.log(
  'fault             rounds  failed  split-brain  lost commits  failover s (median/max)  primary again s (median/max)  -rw stale s (median/max)  Healthy after heal s (median/max)',
);
for (const [name, outcomes] of results) {
  const ok = outcomes.filter((o): o is RoundOutcome => !(o instanceof Error));
  const failover = ok.flatMap((o) => (o.failoverMs === undefined ? [] : [o.failoverMs]));
  const healthy = ok.map((o) => o.healthyAfterHealMs);
  const resumed = ok.flatMap((o) => (o.primaryResumedMs === undefined ? [] : [o.primaryResumedMs]));
  const splitBrains = Math.max(0, ...ok.map((o) => o.splitBrains.length));
  const lost = ok.reduce((n, o) => n + o.missing.length, 0);
  const stale = ok.map(staleMs);
  console.log(
    `${name.padEnd(17)} ${String(outcomes.length).padStart(6)}  ${String(outcomes.length - ok.length).padStart(6)}  ${String(splitBrains).padStart(11)}  ${String(lost).padStart(12)}  ${`${medianSeconds(failover)}/${max(failover)}`.padStart(23)}  ${`${medianSeconds(resumed)}/${max(resumed)}`.padStart(28)}  ${`${medianSeconds(stale)}/${max(stale)}`.padStart(24)}  ${`${medianSeconds(healthy)}/${max(healthy)}`.padStart(33)}`,
  );
}
process.exit(0);
