/**
 * Observers for partition runs. The sampler writes to every member directly, on a connection of
 * its own per member, and records which member committed when; from that, writable periods (runs
 * of consecutive commits of one member) and split-brain instants (periods of two members that
 * overlap in time) are computed as pure functions.
 */
import pg from 'pg';
import { verifyFull } from './cluster-tls.js';
import { Ports } from '../../lib/ports.js';

export interface Sample {
  member: string;
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

export interface Period {
  member: string;
  from: number;
  to: number;
}

export interface SplitBrain {
  members: [string, string];
  from: number;
  to: number;
}

/** Runs of consecutive committed samples of each member, from the first start to the last end. */
export function writablePeriods(samples: Sample[]): Period[] {
  const periods: Period[] = [];
  const open = new Map<string, Period>();
  for (const sample of [...samples].sort((a, b) => a.startedAt - b.startedAt)) {
    const current = open.get(sample.member);
    if (!sample.ok) {
      if (current) periods.push(current);
      open.delete(sample.member);
    } else if (current) current.to = Math.max(current.to, sample.endedAt);
    else open.set(sample.member, { member: sample.member, from: sample.startedAt, to: sample.endedAt });
  }
  periods.push(...open.values());
  return periods.sort((a, b) => a.from - b.from);
}

/** Every overlap of two members' writable periods: moments when both took writes. */
export function splitBrainInstants(samples: Sample[]): SplitBrain[] {
  const periods = writablePeriods(samples);
  const found: SplitBrain[] = [];
  for (let i = 0; i < periods.length; i += 1) {
    for (let j = i + 1; j < periods.length; j += 1) {
      const [a, b] = [periods[i], periods[j]];
      if (a.member === b.member || b.from >= a.to) continue;
      found.push({ members: [a.member, b.member], from: b.from, to: Math.min(a.to, b.to) });
    }
  }
  return found;
}

/** Members other than `except` that committed a sample that started at or after `since`. */
export function committedSince(samples: Sample[], since: number, except?: string): string[] {
  return [...new Set(samples.filter((s) => s.ok && s.startedAt >= since && s.member !== except).map((s) => s.member))];
}

/**
 * Inserts into `table` (member text, at timestamptz) on every member every `intervalMs`. A sample
 * counts as committed only when the server acknowledged it within `timeoutMs`; on any error the
 * connection is dropped and opened again for the next sample.
 */
export function startSampler(options: {
  members: Array<{ name: string; ip: string }>;
  password: string;
  table: string;
  intervalMs?: number;
  timeoutMs?: number;
  /** Verified TLS to each member (every remote session needs it): the cluster CA and the name of member `name`. */
  tls?: { ca: string; serverName: (member: string) => string };
}) {
  const samples: Sample[] = [];
  let stopped = false;
  const timeoutMs = options.timeoutMs ?? 1000;
  const loops = options.members.map(async ({ name, ip }) => {
    let client: pg.Client | undefined;
    while (!stopped) {
      const startedAt = Date.now();
      let ok = false;
      try {
        if (!client) {
          client = new pg.Client({
            host: ip,
            port: Ports.postgres,
            user: 'postgres',
            password: options.password,
            database: 'postgres',
            ...(options.tls ? { ssl: verifyFull(options.tls.ca, options.tls.serverName(name)) } : {}),
            connectionTimeoutMillis: timeoutMs,
            query_timeout: timeoutMs,
          });
          client.on('error', () => undefined);
          await client.connect();
        }
        await client.query(`INSERT INTO ${options.table} (member) VALUES ($1)`, [name]);
        ok = true;
      } catch {
        const broken = client;
        client = undefined;
        void broken?.end().catch(() => undefined);
      }
      samples.push({ member: name, startedAt, endedAt: Date.now(), ok });
      await new Promise((r) => setTimeout(r, Math.max(0, (options.intervalMs ?? 50) - (Date.now() - startedAt))));
    }
    await client?.end().catch(() => undefined);
  });
  return {
    samples,
    async stop(): Promise<Sample[]> {
      stopped = true;
      await Promise.all(loops);
      return samples;
    },
  };
}
