import pg from 'pg';
import type { Member } from './harness.js';

/**
 * Who accepts writes, sampled every 50 ms per member with fresh connections (a frozen member only
 * slows its own samples down). Each writable answer is kept as the interval in which the server
 * was writable at some instant; two such intervals of different members that overlap are a split
 * brain at a sampled instant. Extra intervals (a session held open) can be added with note().
 */
export interface WritableSample {
  member: string;
  start: number;
  end: number;
}

export interface WritableSampler {
  note(sample: WritableSample): void;
  stop(): Promise<{ rounds: number; writable: WritableSample[] }>;
}

const connectTimeoutMs = 1000;

async function writable(member: Member): Promise<boolean> {
  const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return rows[0]?.r === false;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function sampleWriters(members: Member[]): WritableSampler {
  const samples: WritableSample[] = [];
  let rounds = 0;
  let running = true;
  const loops = members.map(async (member) => {
    while (running) {
      const start = Date.now();
      if (await writable(member)) samples.push({ member: member.name, start, end: Date.now() });
      rounds += 1;
      await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - start))));
    }
  });
  return {
    note: (sample) => samples.push(sample),
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return { rounds, writable: samples };
    },
  };
}

/** Pairs of writable intervals of different members that overlap in time. */
export function overlappingWriters(samples: WritableSample[]): string[] {
  const sorted = [...samples].sort((a, b) => a.start - b.start);
  const found: string[] = [];
  for (let i = 0; i < sorted.length; i += 1) {
    const a = sorted[i]!;
    for (let j = i + 1; j < sorted.length && sorted[j]!.start <= a.end; j += 1) {
      const b = sorted[j]!;
      if (b.member !== a.member) found.push(`${a.member} [${a.start}, ${a.end}] and ${b.member} [${b.start}, ${b.end}]`);
    }
  }
  return found;
}
