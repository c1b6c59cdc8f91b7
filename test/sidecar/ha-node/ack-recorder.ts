import pg from 'pg';
import type { Member } from './harness.js';

/**
 * Records every id whose INSERT a writable member acknowledged, following whichever member is
 * writable (across failovers, and across clusters for a role swap), and when each ack came: the
 * longest gap between two acks is the write downtime a client saw.
 */
export class AckRecorder {
  readonly acked: number[] = [];
  readonly ackedAt: number[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly members: Member[],
    private readonly table = 'acked',
  ) {
    this.done = this.run();
  }

  async stop(): Promise<number[]> {
    this.running = false;
    await this.done;
    return this.acked;
  }

  /** The longest time between two acknowledged INSERTs (ms), 0 with fewer than two. */
  longestGapMs(): number {
    let longest = 0;
    for (let i = 1; i < this.ackedAt.length; i += 1) longest = Math.max(longest, this.ackedAt[i]! - this.ackedAt[i - 1]!);
    return longest;
  }

  private async primaryClient(): Promise<pg.Client | undefined> {
    // All at once: asking one member after the other would add to the gap a client sees.
    const writable = await Promise.all(this.members.map((m) => m.isWritable()));
    for (const member of this.members.filter((_, i) => writable[i])) {
      const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 1000, query_timeout: 20_000 });
      client.on('error', () => undefined);
      return client.connect().then(
        () => client,
        () => undefined,
      );
    }
    return undefined;
  }

  private async run(): Promise<void> {
    let client: pg.Client | undefined;
    for (let id = 1; this.running;) {
      client ??= await this.primaryClient();
      if (!client) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const ok = await client.query(`INSERT INTO ${this.table} VALUES ($1)`, [id]).then(
        () => true,
        () => false,
      );
      if (ok) {
        this.acked.push(id);
        this.ackedAt.push(performance.now());
      } else {
        await client.end().catch(() => undefined);
        client = undefined;
      }
      id += 1;
    }
    await client?.end().catch(() => undefined);
  }
}
