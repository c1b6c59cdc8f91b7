import type { Logger } from '../../../../lib/log.js';
import { roleOf, type NodeSnapshot } from '../../ha/snapshot.js';
import { readPendingRestart, type PendingRestart, type PendingRestartRow } from '../../ops/loop-decisions.js';
import { restartConditionsMet, restartTexts, type RestartFacts, type RestartRequest } from '../../ops/restart-request.js';
import { reply, type Reply } from '../../ops/texts.js';
import { runTool } from '../../postgres/runner.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { dirname, join } from 'node:path';

export interface ScheduledRestart {
  request: RestartRequest;
  timer: NodeJS.Timeout;
}

/**
 * The local PostgreSQL operations of one node (restart, reload, reinitialize), one at a time,
 * plus the scheduled restart. They run between two HA cycles (the loop's runExclusive) and wake
 * the loop afterwards so it republishes the new state at once.
 */
export class NodeOperations {
  private busy: string | undefined;
  private scheduled: ScheduledRestart | undefined;

  constructor(
    private readonly pg: PostgresInstance | undefined,
    private readonly snapshot: () => NodeSnapshot,
    private readonly wake: (reason: string) => void,
    private readonly logger: Logger,
    /** The loop's serialiser: no HA cycle runs while an operation changes the server. */
    private readonly runExclusive: <T>(name: string, fn: () => Promise<T>) => Promise<T> = (_name, fn) => fn(),
  ) {}

  inProgress(): string | undefined {
    return this.busy;
  }

  scheduledRestart(): RestartRequest | undefined {
    return this.scheduled?.request;
  }

  async pendingRestart(): Promise<PendingRestart> {
    const pg = this.pg;
    if (!pg || !pg.isRunning()) return { pending: this.snapshot().pendingRestart, reason: this.snapshot().pendingRestartReason ?? {} };
    return readPendingRestart((sql) => pg.query<PendingRestartRow>(sql)).catch(() => ({ pending: this.snapshot().pendingRestart, reason: {} }));
  }

  /** Role and version read from the server now (the loop's snapshot may be a cycle old or empty). */
  async facts(): Promise<RestartFacts> {
    const snapshot = this.snapshot();
    const status = this.pg?.isRunning() ? await this.pg.status().catch(() => snapshot.status) : snapshot.status;
    const role = status ? (status.inRecovery ? 'replica' : snapshot.isLeader ? 'primary' : 'unknown') : roleOf(snapshot) === 'replica' ? 'replica' : 'unknown';
    return { role, serverVersion: status?.serverVersion, pendingRestart: (await this.pendingRestart()).pending };
  }

  /** Restarts now when every condition of the request holds. */
  async restart(request: RestartRequest): Promise<Reply> {
    const pg = this.pg;
    if (!pg) return reply(503, 'restart is not possible: this node runs no PostgreSQL');
    if (this.busy) return reply(503, `${this.busy} already in progress`);
    if (!restartConditionsMet(request, await this.facts())) return reply(503, restartTexts.notSatisfied);
    const timeout = Math.max(1, Math.ceil(request.timeout ?? this.snapshot().config.primary_start_timeout));
    return this.exclusive('restart', async () => {
      // One pg_ctl call keeps the gap in which the loop could see a stopped server short. The log
      // file is the one PostgresInstance.start uses; without -l the postmaster would hold our pipe.
      const logFile = join(dirname(pg.settings.dataDir), 'postgresql.log');
      const args = ['-D', pg.settings.dataDir, '-l', logFile, '-m', 'fast', '-w', '-t', String(timeout), 'restart'];
      let output = '';
      const restarted = await pg.whileRestarting(async () => {
        const result = await runTool(join(pg.settings.binDir, 'pg_ctl'), args, {
          runAs: pg.settings.runAs,
          activity: pg.activity,
          timeoutMs: (timeout + 70) * 1000,
        });
        output = result.output;
        return result.code === 0;
      });
      if (restarted) {
        this.logger.info('PostgreSQL restarted on request');
        return reply(200, restartTexts.done);
      }
      this.logger.error({ output: output.slice(-300) }, 'restart failed');
      return reply(503, pg.state === 'starting' ? 'postgres is still starting' : restartTexts.failed);
    });
  }

  schedule(request: RestartRequest, at: Date): Reply {
    if (this.scheduled) return reply(409, restartTexts.alreadyScheduled);
    const delay = Math.max(0, at.getTime() - Date.now());
    const timer = setTimeout(() => {
      this.scheduled = undefined;
      void this.restart({ ...request, schedule: undefined }).then((result) => this.logger.info({ code: result.code, text: result.text }, 'scheduled restart'));
    }, delay);
    timer.unref();
    this.scheduled = { request, timer };
    return reply(202, restartTexts.scheduled);
  }

  cancelScheduled(): Reply {
    if (!this.scheduled) return reply(404, restartTexts.noneScheduled);
    clearTimeout(this.scheduled.timer);
    this.scheduled = undefined;
    return reply(200, restartTexts.deleted);
  }

  /** SIGHUP: PostgreSQL re-reads its files; the loop rewrites them from the dynamic config when woken. */
  async reload(): Promise<Reply> {
    const pg = this.pg;
    if (pg?.isRunning()) {
      await pg.reload().catch((error: Error) => this.logger.warn({ err: error.message }, 'reload failed'));
    }
    this.wake('reload');
    return reply(202, 'reload scheduled');
  }

  /**
   * Replica only: stops the server, removes the data directory and lets the loop clone it again
   * from the leader on its next cycle (which we trigger at once).
   */
  async reinitialize(hasLeader: boolean): Promise<Reply> {
    const pg = this.pg;
    const snapshot = this.snapshot();
    if (snapshot.isLeader) return reply(503, 'I am the leader, can not reinitialize');
    if (!hasLeader) return reply(503, 'Cluster has no leader, can not reinitialize');
    if (!pg) return reply(503, 'reinitialize is not possible: this node runs no PostgreSQL');
    if (this.busy) return reply(503, `${this.busy} already in progress`);
    return this.exclusive('reinitialize', async () => {
      await pg.stop('immediate');
      pg.removeDataDirectory();
      pg.markCreatingReplica();
      this.logger.warn('data directory removed for reinitialize; the loop clones it again from the leader');
      this.wake('reinitialize');
      return reply(200, 'reinitialize started');
    });
  }

  stop(): void {
    if (this.scheduled) clearTimeout(this.scheduled.timer);
    this.scheduled = undefined;
  }

  private async exclusive(what: string, action: () => Promise<Reply>): Promise<Reply> {
    this.busy = what;
    try {
      return await this.runExclusive(what, action);
    } finally {
      this.busy = undefined;
      this.wake(what);
    }
  }
}
