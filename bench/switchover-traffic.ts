import type pg from 'pg';
import type { ApiCredentials } from '../api/ha-node/credentials.js';
import { callMember, type ApiReply } from '../ctl/client.js';
import type { Member } from '../test/sidecar/ha-node/harness.js';

/** What the switchover benchmarks share (bench/pooler-switchover.ts, bench/tls-switchover.ts): the clients that insert, the request. */

/** POST /switchover from `primary` to `candidate`. */
export function requestSwitchover(primary: Member, candidate: Member, credentials: ApiCredentials): Promise<ApiReply> {
  return callMember(primary.apiUrl, 'POST', '/switchover', { leader: primary.name, candidate: candidate.name }, { credentials, timeoutMs: 40_000 });
}

/** A client inserting into bench_ticks every 20 ms: acknowledged and failed inserts, the longest gap. */
export interface Tally {
  acks: number;
  failures: number;
  longestGapMs: number;
}

/** Inserts every 20 ms on the client `connect` gives, reconnecting after an error. */
export function insertLoop(connect: () => Promise<pg.Client>): { stop(): Promise<Tally> } {
  const tally: Tally = { acks: 0, failures: 0, longestGapMs: 0 };
  let running = true;
  const done = (async () => {
    let client: pg.Client | undefined;
    let lastAck = performance.now();
    while (running) {
      try {
        client ??= await connect();
        await client.query('INSERT INTO bench_ticks DEFAULT VALUES');
        const now = performance.now();
        tally.longestGapMs = Math.max(tally.longestGapMs, now - lastAck);
        lastAck = now;
        tally.acks += 1;
      } catch {
        tally.failures += 1;
        void client?.end().catch(() => undefined);
        client = undefined;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    async stop() {
      running = false;
      await done;
      return tally;
    },
  };
}
