import type { Dcs } from '../dcs/types.js';
import type { PostgresInstance } from '../postgres/instance.js';
import { runCycle } from './cycle.js';
import { receiveFailsafe } from './duties/dcs-outage.js';
import { markDemoted, setFence, type HaLoopOptions, type LoopContext } from './loop-context.js';
import { PrimaryHeartbeat } from './watches/primary-heartbeat.js';
import { releaseAfterStop } from './election/release.js';
import type { EffectiveConfig } from './settings.js';
import { walPositionOf, type NodeSnapshot } from './snapshot.js';
import { cycleEnded, initialLoopState, type LoopState } from './state.js';

export type { HaLoopOptions } from './loop-context.js';

/**
 * The HA loop: once per loop_wait (or when the DCS watch, the lease-expiry timer or the API wakes
 * it) it reads the cluster, publishes this member, and takes at most one decision about
 * PostgreSQL, the way Patroni's ha.py does. Each run returns a sentence saying what it did.
 * This class schedules the cycles and serialises them with API operations; the decisions live in
 * cycle.ts and the duty modules it calls.
 */
export class HaLoop {
  private readonly state: LoopState;
  private readonly context: LoopContext;
  private running = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeResolve: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastAction = '';
  private wakePending = false;
  /** Serialises loop cycles and operations that act on PostgreSQL (restart, reinitialize). */
  private exclusiveTail: Promise<unknown> = Promise.resolve();
  private exclusiveName: string | undefined;

  constructor(
    private readonly options: HaLoopOptions,
    private readonly dcs: Dcs,
    private readonly pg: PostgresInstance,
  ) {
    this.state = initialLoopState(
      { name: options.name, scope: options.scope, version: options.version, tags: options.tags },
      options.baseConfig,
      performance.now(),
    );
    const heartbeat = new PrimaryHeartbeat(pg, this.state, () => this.wake('primary-hung'));
    this.context = { options, dcs, pg, state: this.state, heartbeat, wake: (reason) => this.wake(reason) };
    dcs.onWake((reason) => this.wake(reason));
  }

  snapshot(): NodeSnapshot {
    return {
      ...this.state.snapshot,
      isLeader: this.dcs.isLeader(),
      dcsLastSeen: this.dcs.lastSeen(),
      dbState: this.pg.state,
      config: this.state.config,
      lastProgressAt: this.pg.activity.lastProgressAt(),
    };
  }

  effective(): EffectiveConfig {
    return this.state.config;
  }

  lastActionText(): string {
    return this.lastAction;
  }

  /** A pod of the cluster changed: wake at once when it is the leader's (the kubelet may report it dead). */
  podChanged(podName: string): void {
    const holder = this.state.snapshot.cluster?.leader?.holder;
    if (holder && holder === podName && holder !== this.options.name) this.wake('leader-pod-changed');
  }

  wake(reason = 'api'): void {
    this.options.logger.debug({ reason }, 'loop woken');
    // A wake during a cycle must not be lost: the next sleep returns at once.
    if (this.wakeResolve) this.wakeResolve();
    else this.wakePending = true;
  }

  start(): void {
    this.running = true;
    this.loopDone = this.runForever();
  }

  /** Stops the loop; a leader stops PostgreSQL cleanly first, then releases the lease. */
  async shutdown(): Promise<void> {
    this.running = false;
    this.context.heartbeat.stop();
    this.wake('shutdown');
    await this.loopDone;
    const wasLeader = this.dcs.isLeader();
    let lastLsn: number | undefined;
    if (wasLeader) lastLsn = walPositionOf(await this.pg.status().catch(() => undefined)) || undefined;
    // Peers racing for the lock ask our API: from now on it must not call us a running primary.
    markDemoted(this.context);
    await this.pg.stop('fast');
    if (wasLeader) {
      // The shutdown checkpoint is the last WAL a replica needs; publish it with the release.
      const released = await releaseAfterStop(this.pg, this.dcs, lastLsn);
      this.options.logger.info(released, 'primary stopped; released the leader lease');
    }
    setFence(this.context, 0);
    this.dcs.stop();
  }

  /**
   * Runs fn while no loop cycle and no other exclusive operation runs (the operations API uses
   * this for restart and reinitialize so the loop never sees a half-done step).
   */
  runExclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const run = this.exclusiveTail.then(async () => {
      this.exclusiveName = name;
      try {
        return await fn();
      } finally {
        this.exclusiveName = undefined;
      }
    });
    this.exclusiveTail = run.catch(() => undefined);
    return run;
  }

  /** The exclusive operation in progress, if any (for "<action> already in progress" answers). */
  busyWith(): string | undefined {
    return this.exclusiveName === 'ha-cycle' ? undefined : this.exclusiveName;
  }

  /** One HA cycle (see cycle.ts); returns the sentence saying what it did. */
  cycle(): Promise<string> {
    return runCycle(this.context, (action) => this.noteAction(action));
  }

  /** POST /failsafe from a leader cut off from the API server. */
  receiveFailsafe(from: { name?: unknown }): { status: number; text: string } {
    return receiveFailsafe(this.context, from);
  }

  private async runForever(): Promise<void> {
    while (this.running) {
      const started = performance.now();
      try {
        this.noteAction(await this.runExclusive('ha-cycle', () => this.cycle()));
      } catch (error) {
        this.options.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'ha loop cycle failed');
      }
      cycleEnded(this.state, performance.now());
      if (!this.running) break;
      const elapsed = performance.now() - started;
      await this.sleep(Math.max(0, this.state.config.loop_wait * 1000 - elapsed));
    }
  }

  /** Logs what a cycle did, once per change, as soon as it is done (before the member record is published). */
  private noteAction(action: string): void {
    if (action !== this.lastAction) this.options.logger.info({ action }, 'ha loop');
    this.lastAction = action;
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wakeResolve = () => {
        clearTimeout(this.wakeTimer);
        this.wakeResolve = undefined;
        resolve();
      };
      this.wakeTimer = setTimeout(() => this.wakeResolve?.(), ms);
    });
  }
}
