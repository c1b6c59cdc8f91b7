import pg from 'pg';
import type { ClusterView } from '../../dcs/types.js';
import { peerClientSsl } from '../../postgres/peer-tls.js';
import type { LoopContext } from '../loop-context.js';

/**
 * Tells the old primary, during a planned switchover, the moment the new leader's PostgreSQL
 * takes writes. Every poll used to LIST the Leases and open a new (SCRAM) connection: on a loaded
 * machine each took tens of milliseconds and competed with the candidate's own lock write. Now the
 * cluster comes from the DCS watch cache when it is sound, and one connection per member address
 * is kept across polls: a standby's session survives its promotion, so the same connection sees
 * `pg_is_in_recovery()` turn false. A connection may be opened before the stop (`prepare`),
 * taking its set-up off the clients' stall. With TLS among the members the session verifies the
 * peer's certificate as replication does (postgres/peer-tls.ts).
 */
export interface LeaderAddress {
  host: string;
  port: number;
}

/** A member to connect to: its address, and its name for the certificate check. */
type Peer = LeaderAddress & { name: string };

export class PromotionProbe {
  private client: pg.Client | undefined;
  private clientOf: string | undefined;

  constructor(private readonly ctx: LoopContext) {}

  /** Opens the connection to a member now (best effort), so the first poll need not. */
  async prepare(cluster: ClusterView, memberName: string): Promise<void> {
    const member = cluster.members.find((m) => m.name === memberName);
    if (member) await this.connectionTo({ name: member.name, host: member.host, port: member.port }).catch(() => undefined);
  }

  /** The new leader's address once its PostgreSQL takes writes; undefined while it does not yet. */
  async promotedLeader(): Promise<LeaderAddress | undefined> {
    const cluster = this.ctx.dcs.cachedCluster() ?? (await this.ctx.dcs.getCluster().catch(() => undefined));
    const holder = cluster?.leader?.holder;
    if (!holder || holder === this.ctx.options.name) return undefined;
    const member = cluster.members.find((m) => m.name === holder);
    if (!member) return undefined;
    const address = { host: member.host, port: member.port };
    try {
      const client = await this.connectionTo({ name: member.name, ...address });
      const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
      return rows[0]?.recovery === false ? address : undefined;
    } catch {
      await this.close();
      return undefined;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.clientOf = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connectionTo(peer: Peer): Promise<pg.Client> {
    const key = `${peer.host}:${peer.port}`;
    if (this.client && this.clientOf === key) return this.client;
    await this.close();
    const { superuser, peerTls } = this.ctx.pg.settings;
    const ssl = peerClientSsl(peerTls, peer);
    const client = new pg.Client({
      host: peer.host,
      port: peer.port,
      ...(ssl ? { ssl } : {}),
      user: superuser.username,
      password: superuser.password,
      database: 'postgres',
      connectionTimeoutMillis: 1000,
      query_timeout: 1000,
    });
    client.on('error', () => undefined);
    await client.connect();
    this.client = client;
    this.clientOf = key;
    return client;
  }
}
