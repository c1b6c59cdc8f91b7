/**
 * Planned switchover benchmark (issue 7; not run in CI): a live 3-member cluster (real ha-node
 * processes with the operations API, PostgreSQL 15, Lease DCS on the API server stand-in), a
 * writer inserting every 10 ms into whichever member accepts writes, and five POST /switchover
 * calls to a named candidate. Prints per run the write gap (longest interval without a committed
 * insert around the switchover) and the API reply time, then the median and the worst.
 *
 *   node --import tsx bench/failover-switchover.ts        (BENCH_RUNS=5)
 *
 * Targets: write gap <= 1.0 s, reply <= 1.5 s (Patroni in the same lab: 1.2-1.4 s, 2.05 s).
 */
import pg from 'pg';
import type { Member, TestCluster } from '../test/sidecar/ha-node/harness.js';
import { startOpsCluster } from '../test/sidecar/ha-node/ops/ops-cluster.js';
import { median } from './stats.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const credentials = { user: 'bench', password: 'bench-password' };
const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

/** One persistent connection per member; a failed one is replaced on the next attempt. */
class Writer {
  private readonly clients = new Map<string, pg.Client>();
  private current: Member | undefined;
  readonly commits: number[] = [];
  private running = true;
  private done: Promise<void> | undefined;

  constructor(private readonly members: Member[]) {}

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
    await Promise.all([...this.clients.values()].map((c) => c.end().catch(() => undefined)));
  }

  private async client(member: Member): Promise<pg.Client> {
    const existing = this.clients.get(member.name);
    if (existing) return existing;
    const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 500, query_timeout: 1000 });
    client.on('error', () => this.clients.delete(member.name));
    await client.connect();
    this.clients.set(member.name, client);
    return client;
  }

  private async tryInsert(member: Member): Promise<boolean> {
    try {
      await (await this.client(member)).query('INSERT INTO bench_writes DEFAULT VALUES');
      return true;
    } catch {
      const client = this.clients.get(member.name);
      this.clients.delete(member.name);
      void client?.end().catch(() => undefined);
      return false;
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const order = this.current ? [this.current, ...this.members.filter((m) => m !== this.current)] : this.members;
      for (const member of order) {
        if (await this.tryInsert(member)) {
          this.commits.push(performance.now());
          this.current = member;
          break;
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Longest interval between consecutive commits inside [from, to]. */
  gapBetween(from: number, to: number): number {
    const inside = this.commits.filter((t) => t >= from && t <= to);
    const before = this.commits.filter((t) => t < from).at(-1);
    const points = before === undefined ? inside : [before, ...inside];
    let gap = 0;
    for (let i = 1; i < points.length; i += 1) gap = Math.max(gap, points[i]! - points[i - 1]!);
    return gap;
  }
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function healthy(cluster: TestCluster): Promise<Member> {
  const primary = await waitFor('a primary', () => cluster.primary());
  await waitFor('two streaming replicas', async () => {
    const doc = (await primary.get('/cluster')).json() as { members: Array<{ role: string; state: string }> };
    return doc.members.filter((m) => m.role !== 'leader' && m.state === 'streaming').length === 2;
  });
  return primary;
}

async function main(): Promise<void> {
  const cluster = await startOpsCluster({ scope: 'bench', env: { KEELSON_API_USERNAME: credentials.user, KEELSON_API_PASSWORD: credentials.password } });
  const writer = new Writer(cluster.members);
  const results: Array<{ run: number; from: string; to: string; gapMs: number; replyMs: number; reply: string }> = [];
  try {
    const first = await healthy(cluster);
    await first.query('CREATE TABLE IF NOT EXISTS bench_writes (id bigserial PRIMARY KEY, at timestamptz DEFAULT now())');
    writer.start();
    for (let run = 1; run <= runs; run += 1) {
      const primary = await healthy(cluster);
      await new Promise((r) => setTimeout(r, 1000));
      const candidate = cluster.members.filter((m) => m !== primary)[run % 2]!;
      const started = performance.now();
      const response = await fetch(`${primary.apiUrl}/switchover`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: authorization },
        body: JSON.stringify({ leader: primary.name, candidate: candidate.name }),
        signal: AbortSignal.timeout(60_000),
      });
      const reply = `${response.status} ${await response.text()}`;
      const replied = performance.now();
      await waitFor('writes to resume', async () => writer.commits.at(-1)! > replied + 2000, 30_000);
      results.push({
        run,
        from: primary.name,
        to: candidate.name,
        gapMs: Math.round(writer.gapBetween(started - 500, replied + 2000)),
        replyMs: Math.round(replied - started),
        reply,
      });
      const last = results.at(-1)!;
      process.stdout.write(`run ${run}: ${last.from} -> ${last.to}  write gap ${last.gapMs} ms  reply ${last.replyMs} ms  (${last.reply})\n`);
    }
  } finally {
    await writer.stop();
    await cluster.stop();
  }
  const gaps = results.map((r) => r.gapMs);
  const replies = results.map((r) => r.replyMs);
  process.stdout.write(`\nplanned switchover, ${results.length} runs\n`);
  process.stdout.write(`  write gap: median ${median(gaps)} ms, max ${Math.max(...gaps)} ms (target <= 1000 ms; Patroni 1200-1400 ms)\n`);
  process.stdout.write(`  API reply: median ${median(replies)} ms, max ${Math.max(...replies)} ms (target <= 1500 ms; Patroni 2050 ms)\n`);
}

await main();
