import pg from 'pg';

/**
 * PgBouncer's admin console, reached over its unix socket (the TCP listener is for clients; the
 * admin user's password is random per process and known only to `keelson pooler`). A PAUSE uses
 * its own short connection, so a PAUSE that hangs never blocks the RESUME that ends it. The other
 * commands share one kept session: a switchover's RELOAD and RESUME then cost no login (a SCRAM
 * exchange between two processes, each waiting for a CPU on a loaded machine).
 */
export interface AdminConsoleAddress {
  socketDir: string;
  port: number;
  user: string;
  password: string;
}

export type PauseResult = { ok: true; waitedMs: number } | { ok: false; reason: string };

export class AdminConsole {
  private session: Promise<pg.Client> | undefined;

  constructor(private readonly address: AdminConsoleAddress) {}

  private async connect(): Promise<pg.Client> {
    const { socketDir, port, user, password } = this.address;
    const client = new pg.Client({ host: socketDir, port, user, password, database: 'pgbouncer', connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /**
   * Runs one admin command (simple protocol: the console has no extended query support) on the
   * kept session. A session that broke (PgBouncer restarted, socket closed) is replaced once; an
   * error PgBouncer answered (it carries a severity) is the command's and is thrown as is.
   */
  async command(text: string): Promise<Record<string, unknown>[]> {
    for (let attempt = 1; ; attempt += 1) {
      const session = (this.session ??= this.connect());
      let client: pg.Client;
      try {
        client = await session;
      } catch (error) {
        // The next command logs in again.
        if (this.session === session) this.session = undefined;
        throw error;
      }
      try {
        const result = await client.query(text);
        return result.rows as Record<string, unknown>[];
      } catch (error) {
        if ((error as { severity?: unknown }).severity !== undefined) throw error;
        if (this.session === session) this.session = undefined;
        await client.end().catch(() => undefined);
        if (attempt >= 2) throw error;
      }
    }
  }

  /** Ends the kept session. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    await session?.then((client) => client.end()).catch(() => undefined);
  }

  /**
   * PAUSE, bounded: PgBouncer answers once every server connection is back in the pool (no
   * transaction in flight). When that takes longer than `timeoutMs` the pause is undone with
   * RESUME, so clients are never held by a pause nobody will finish.
   */
  async pause(timeoutMs: number): Promise<PauseResult> {
    const startedAt = Date.now();
    const client = await this.connect();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const outcome = await Promise.race([
        client.query('PAUSE').then(
          () => 'paused' as const,
          (error: Error) => error,
        ),
        timedOut,
      ]);
      if (outcome === 'paused') return { ok: true, waitedMs: Date.now() - startedAt };
      await this.command('RESUME').catch(() => undefined);
      if (outcome === 'timeout') return { ok: false, reason: `PAUSE did not finish within ${timeoutMs} ms (a transaction stayed open); resumed` };
      return { ok: false, reason: `PAUSE failed: ${outcome.message}` };
    } finally {
      clearTimeout(timer);
      await client.end().catch(() => undefined);
    }
  }

  async resume(): Promise<void> {
    try {
      await this.command('RESUME');
    } catch (error) {
      // "pooler is not paused/suspended" means there is nothing to undo.
      if (!/not paused/i.test((error as Error).message)) throw error;
    }
  }

  async reload(): Promise<void> {
    await this.command('RELOAD');
  }
}
