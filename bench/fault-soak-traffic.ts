/**
 * Client traffic for the fault soak: a writer that follows the pods labelled primary (what `-rw`
 * selects) and records every acknowledged commit, and a routing sampler that measures how long a
 * pod labelled primary was not writable while another member was (a stale `-rw` backend).
 */
import * as k8s from '@kubernetes/client-node';
import pg from 'pg';
import type { Member, TestCluster } from '../test/sidecar/ha-node/harness.js';

/** Pods labelled primary, refreshed every 100 ms from the API server (the -rw selector). */
export class PrimaryLabels {
  labelled: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(cluster: TestCluster) {
    const core = cluster.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const labelSelector = `keelson.io/cluster=${cluster.scope},keelson.io/role=primary`;
    this.loop = (async () => {
      while (this.running) {
        const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector }).catch(() => undefined);
        if (pods) this.labelled = pods.items.map((p) => p.metadata!.name!).sort();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** Inserts ids one after another through whichever pod is labelled primary; keeps what was acknowledged. */
export class AckedWriter {
  readonly acked: Array<{ id: number; at: number }> = [];
  private next = 1;
  private running = true;
  private readonly clients = new Map<string, pg.Client>();
  private readonly loop: Promise<void>;

  constructor(
    private readonly members: Member[],
    private readonly labels: PrimaryLabels,
  ) {
    this.loop = this.run();
  }

  private async client(member: Member): Promise<pg.Client> {
    const existing = this.clients.get(member.name);
    if (existing) return existing;
    const client = new pg.Client({ connectionString: member.pgUrl, connectionTimeoutMillis: 500, query_timeout: 2000 });
    client.on('error', () => this.clients.delete(member.name));
    await client.connect();
    this.clients.set(member.name, client);
    return client;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const labelled = this.labels.labelled;
      // A Service spreads connections over its backends: take one of the labelled pods at random.
      const name = labelled[Math.floor(Math.random() * labelled.length)];
      const member = this.members.find((m) => m.name === name);
      if (member) {
        const id = this.next++;
        try {
          await (await this.client(member)).query('INSERT INTO soak (id) VALUES ($1)', [id]);
          this.acked.push({ id, at: Date.now() });
        } catch {
          const client = this.clients.get(member.name);
          this.clients.delete(member.name);
          void client?.end().catch(() => undefined);
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Longest time without an acknowledged commit inside [from, to]. */
  longestGap(from: number, to: number): number {
    const points = [from, ...this.acked.filter((a) => a.at > from && a.at < to).map((a) => a.at), to];
    let gap = 0;
    for (let i = 1; i < points.length; i += 1) gap = Math.max(gap, points[i]! - points[i - 1]!);
    return gap;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.all([...this.clients.values()].map((c) => c.end().catch(() => undefined)));
  }
}

/** Every 100 ms: is a labelled pod not writable while some member is? Adds up that time. */
export class StaleRouting {
  staleMs = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(members: Member[], labels: PrimaryLabels) {
    this.loop = (async () => {
      let last = Date.now();
      while (this.running) {
        const writable = await Promise.all(members.map((m) => m.isWritable()));
        const now = Date.now();
        const anyWritable = writable.some(Boolean);
        const stale = labels.labelled.some((name) => !writable[members.findIndex((m) => m.name === name)]);
        if (anyWritable && stale) this.staleMs += now - last;
        last = now;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  }

  async stop(): Promise<number> {
    this.running = false;
    await this.loop;
    return this.staleMs;
  }
}
