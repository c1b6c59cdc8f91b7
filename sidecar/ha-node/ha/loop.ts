import type { Logger } from '../../../lib/log.js';
import type { ClusterView, Dcs, LeaderRecord, MemberRecord, MemberTags } from '../dcs/types.js';
import { fenceDeadlineFor, writeFenceDeadline } from '../fence/deadline.js';
import type { LeaderAddress, PostgresInstance } from '../postgres/instance.js';
import type { ServerStatus } from '../postgres/status.js';
import { dbStateText } from '../postgres/state.js';
import { otherMembers, raceVerdict } from './election.js';
import { isPaused, manualFailoverTiming, raceAllowed, readPendingRestart } from '../ops/loop-decisions.js';
import { askPeer, askPeers } from './peers.js';
import { confirmFailsafe } from './failsafe-client.js';
import { quorumVerdict } from '../ops/quorum-race.js';
import { runSyncUpkeep } from './sync-upkeep.js';
import { effectiveConfig, initialDynamicConfig, noFailover, type EffectiveConfig } from './settings.js';
import { walPositionOf, type NodeSnapshot } from './snapshot.js';
import { readTimelineHistory } from './timeline-history.js';
import { leaderCrashed, type CrashEvidence } from '../takeover/evidence.js';
import type { LeaderCrashJudge } from '../takeover/judge.js';

export interface HaLoopOptions {
  name: string;
  scope: string;
  version: string;
  apiUrl: string;
  tags: MemberTags;
  /** Local defaults for the timers and failover rules (the dynamic configuration overrides them). */
  baseConfig: EffectiveConfig;
  /** The file the fencing process watches; undefined disables fencing. */
  fenceFile?: string;
  /** Called with the role the pod label should show (best effort). */
  setRoleLabel?: (role: 'primary' | 'replica') => Promise<void>;
  /** Gathers crash evidence about the leader pod for an early takeover (ADR 0404); undefined disables it. */
  crashJudge?: Pick<LeaderCrashJudge, 'kubeletSaysDead' | 'evidence'>;
  logger: Logger;
}

/** An early takeover in progress: the lease version judged and the evidence that the holder is gone. */
interface Takeover {
  leader: LeaderRecord;
  evidence: CrashEvidence;
}

type Role = 'primary' | 'replica';

/** Patroni's member_slots_ttl default: how long a silent member keeps its replication slot. */
const memberSlotsTtlMs = 30 * 60 * 1000;

/**
 * The HA loop: once per loop_wait (or when the DCS watch, the lease-expiry timer or the API wakes
 * it) it reads the cluster, publishes this member, and takes at most one decision about
 * PostgreSQL, the way Patroni's ha.py does. Each run returns a sentence saying what it did.
 */
export class HaLoop {
  private config: EffectiveConfig;
  private snapshotState: NodeSnapshot;
  private running = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeResolve: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastRenewMono = 0;
  private crashedSince: number | undefined;
  private wasRunning = false;
  private lastAction = '';
  /** The last POST /failsafe from a leader that could not reach the API server. */
  private failsafeContact: { name: string; at: number } | undefined;
  /** Where the primary's WAL was when synchronous_standby_names last changed (0 = unknown). */
  private syncChangeLsn = 0;
  /** Since when this replica follows the current leader without streaming from it. */
  private notStreamingSince: number | undefined;
  private configDirty = false;
  private wakePending = false;
  /** Set when this cycle could not reach the API: skip further API writes until the next cycle. */
  private dcsUnreachable = false;
  /** When this member released the lock because its primary would not start (it sits out the next race). */
  private gaveUpLockAt: number | undefined;
  /** Serialises loop cycles and operations that act on PostgreSQL (restart, reinitialize). */
  private exclusiveTail: Promise<unknown> = Promise.resolve();
  private exclusiveName: string | undefined;
  /** The last crash evidence that fell short of a takeover (logged once). */
  private lastDisputedEvidence: string | undefined;

  constructor(
    private readonly options: HaLoopOptions,
    private readonly dcs: Dcs,
    private readonly pg: PostgresInstance,
  ) {
    this.config = options.baseConfig;
    this.snapshotState = {
      name: options.name,
      scope: options.scope,
      version: options.version,
      tags: options.tags,
      dbState: 'stopped',
      offlineRole: 'uninitialized',
      isLeader: false,
      failsafeActive: false,
      paused: false,
      dcsLastSeen: 0,
      pendingRestart: false,
      lastLoopAt: performance.now(),
      config: this.config,
    };
    dcs.onWake((reason) => this.wake(reason));
  }

  snapshot(): NodeSnapshot {
    return { ...this.snapshotState, isLeader: this.dcs.isLeader(), dcsLastSeen: this.dcs.lastSeen(), dbState: this.pg.state, config: this.config };
  }

  effective(): EffectiveConfig {
    return this.config;
  }

  lastActionText(): string {
    return this.lastAction;
  }

  /** A pod of the cluster changed: wake at once when it is the leader's (the kubelet may report it dead). */
  podChanged(podName: string): void {
    const holder = this.snapshotState.cluster?.leader?.holder;
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
    this.wake('shutdown');
    await this.loopDone;
    const wasLeader = this.dcs.isLeader();
    let lastLsn: number | undefined;
    if (wasLeader) lastLsn = walPositionOf(await this.pg.status().catch(() => undefined)) || undefined;
    // Peers racing for the lock ask our API: from now on it must not call us a running primary.
    this.markDemoted();
    await this.pg.stop('fast');
    if (wasLeader) {
      // The shutdown checkpoint is the last WAL a replica needs; publish it with the release.
      const control = await this.pg.controlData().catch(() => undefined);
      this.options.logger.info({ state: control?.state }, 'primary stopped; releasing the leader lease');
      await this.dcs.deleteLeader(lastLsn);
    }
    this.setFence(0);
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

  private async runForever(): Promise<void> {
    while (this.running) {
      const started = performance.now();
      try {
        this.noteAction(await this.runExclusive('ha-cycle', () => this.cycle()));
      } catch (error) {
        this.options.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'ha loop cycle failed');
      }
      this.snapshotState.lastLoopAt = performance.now();
      if (!this.running) break;
      const elapsed = performance.now() - started;
      await this.sleep(Math.max(0, this.config.loop_wait * 1000 - elapsed));
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

  // --- one cycle ---------------------------------------------------------------------------

  async cycle(): Promise<string> {
    this.dcsUnreachable = false;
    let cluster: ClusterView;
    try {
      cluster = await this.dcs.getCluster();
    } catch (error) {
      return this.handleDcsError(error);
    }
    this.snapshotState.failsafeActive = false;
    // The API answers again: failsafe confirmations from a cut-off leader no longer stand in for the lease.
    this.failsafeContact = undefined;
    this.applyConfig(cluster);
    this.snapshotState.cluster = cluster;

    if (!this.pg.isInitialized()) {
      // Publish first so the leader creates our replication slot while we clone.
      await this.publish(cluster);
      const action = await this.bootstrapOrClone(cluster);
      this.noteAction(action);
      await this.publish(cluster);
      return action;
    }

    if (cluster.initialize && !(await this.sameSystem(cluster.initialize))) {
      return `refusing to run: the data directory belongs to another cluster than ${cluster.initialize}`;
    }

    const running = this.pg.isRunning();
    let status: ServerStatus | undefined;
    if (running) status = await this.pg.status().catch(() => undefined);
    this.snapshotState.status = status;
    if (status) {
      await this.applyParameters(status);
      // A due switchover skips this query: until the clean stop every millisecond delays the hand-over.
      const pending = this.handOverDue(cluster) ? undefined : await readPendingRestart((sql) => this.pg.query(sql)).catch(() => undefined);
      if (pending) {
        this.snapshotState.pendingRestart = pending.pending;
        this.snapshotState.pendingRestartReason = pending.pending ? pending.reason : undefined;
      }
      this.snapshotState.systemIdentifier = status.systemIdentifier;
      this.pg.state = 'running';
      this.crashedSince = undefined;
    }
    if (!running && this.wasRunning && this.pg.state === 'running') this.pg.state = 'crashed';
    this.wasRunning = running;

    if (cluster.initialize === undefined && status && this.dcs.isLeader()) await this.dcs.setInitialize(status.systemIdentifier);

    const action = !running ? await this.handleStopped(cluster) : !status ? await this.handleUnresponsive(cluster) : await this.handleRunning(cluster, status);
    this.noteAction(action);
    await this.publish(cluster);
    return action;
  }

  private checkedSystem: string | undefined;

  /** The data directory's system identifier must match the cluster's initialize key (checked once). */
  private async sameSystem(initialize: string): Promise<boolean> {
    if (this.checkedSystem === initialize) return true;
    const control = await this.pg.controlData();
    if (!control?.systemIdentifier) return true;
    if (control.systemIdentifier !== initialize) {
      this.options.logger.error({ local: control.systemIdentifier, cluster: initialize }, 'system identifier mismatch');
      return false;
    }
    this.checkedSystem = initialize;
    return true;
  }

  private applyConfig(cluster: ClusterView): void {
    const next = effectiveConfig(this.options.baseConfig, cluster.config);
    const paramsChanged = JSON.stringify(next.parameters) !== JSON.stringify(this.config.parameters);
    this.config = next;
    this.snapshotState.paused = isPaused(cluster.config);
    this.pg.dynamicParameters = next.parameters;
    if (paramsChanged) this.configDirty = true;
  }

  /** Applies changed parameters to a running server (once we know its role, so nothing is lost). */
  private async applyParameters(status: ServerStatus): Promise<void> {
    if (!this.configDirty) return;
    this.configDirty = false;
    const following = this.pg.followingLeader();
    if (status.inRecovery) this.pg.writeConfig(following ?? undefined, true);
    else this.pg.writeConfig(undefined, false);
    await this.pg.reload().catch(() => undefined);
  }

  /** API unreachable: keep going, but a primary that could not renew for retry_timeout demotes. */
  private async handleDcsError(error: unknown): Promise<string> {
    this.dcsUnreachable = true;
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    const sinceRenew = performance.now() - this.lastRenewMono;
    const status = this.pg.isRunning() ? await this.pg.status().catch(() => undefined) : undefined;
    this.snapshotState.status = status;
    if (status && !status.inRecovery) {
      if (this.config.failsafe_mode && (await this.failsafeConfirmed())) {
        return 'continue to run as a leader because failsafe mode is enabled and all members are accessible';
      }
      if (sinceRenew < this.config.retry_timeout * 1000) {
        this.scheduleSoon(500);
        return `DCS is not accessible (${message}); still within retry_timeout`;
      }
      await this.demoteOffline();
      return 'demoted self because DCS is not accessible and I was a leader';
    }
    return `DCS is not accessible (${message})`;
  }

  /**
   * Failsafe: with the API server gone, the primary keeps running only while every member it
   * last listed confirms over the REST API that it is not a primary (Patroni's POST /failsafe).
   */
  private async failsafeConfirmed(): Promise<boolean> {
    const startedEpoch = Date.now();
    const confirmed = await confirmFailsafe(this.snapshotState.cluster, {
      name: this.options.name,
      api_url: this.options.apiUrl,
      conn_url: `postgres://${this.pg.settings.connectHost}:${this.pg.settings.port}/postgres`,
    });
    if (!confirmed) {
      this.snapshotState.failsafeActive = false;
      return false;
    }
    this.snapshotState.failsafeActive = true;
    this.renewed(startedEpoch);
    this.scheduleSoon(500);
    return true;
  }

  /** POST /failsafe from a leader cut off from the API server. */
  receiveFailsafe(from: { name?: unknown }): { status: number; text: string } {
    const status = this.snapshotState.status;
    if (status && !status.inRecovery) return { status: 500, text: 'Running as a leader' };
    if (typeof from.name !== 'string' || from.name.length === 0) return { status: 400, text: 'name is required' };
    this.failsafeContact = { name: from.name, at: performance.now() };
    this.snapshotState.failsafeActive = true;
    return { status: 200, text: 'Accepted' };
  }

  private scheduleSoon(ms: number): void {
    setTimeout(() => this.wake('retry'), ms).unref();
  }

  // --- bootstrap -----------------------------------------------------------------------------

  private async bootstrapOrClone(cluster: ClusterView): Promise<string> {
    if (cluster.initialize === undefined && !cluster.leader) {
      // As in Patroni, a member that may never lead may not create the cluster either: it
      // waits (with every member tagged so, the cluster waits) for an eligible one to bootstrap.
      if (noFailover(this.options.tags)) return 'waiting: tagged nofailover, so this member may not bootstrap the cluster';
      if (!(await this.dcs.takeInitialize())) return 'waiting: another member is bootstrapping';
      try {
        await this.pg.initdb();
        this.pg.dynamicParameters = this.config.parameters;
        this.pg.writeConfig(undefined, false);
        if (!(await this.pg.start(60))) throw new Error('PostgreSQL did not start after initdb');
        await this.pg.createRoles();
        const status = await this.pg.status();
        if (!(await this.dcs.attemptToAcquireLeader(status.location))) throw new Error('could not take the leader lease after bootstrap');
        this.renewed();
        await this.dcs.setConfig(initialDynamicConfig(this.config), { onlyIfMissing: true });
        await this.dcs.setInitialize(status.systemIdentifier);
        this.snapshotState.offlineRole = 'primary';
        return 'initialized a new cluster';
      } catch (error) {
        this.options.logger.error({ err: (error as Error).message }, 'bootstrap failed; giving the initialize key back');
        await this.pg.stop('immediate');
        this.pg.removeDataDirectory();
        this.pg.state = 'initdb_failed';
        await this.dcs.setInitialize(undefined).catch(() => undefined);
        return 'bootstrap failed';
      }
    }
    const leader = this.leaderAddress(cluster);
    if (!leader || leader.name === this.options.name) return 'waiting for the leader to bootstrap';
    this.setFence(0);
    this.pg.dynamicParameters = this.config.parameters;
    await this.pg.basebackup(leader);
    this.pg.writeConfig(leader, true);
    await this.pg.start(60);
    this.snapshotState.offlineRole = 'replica';
    return `created a replica from ${leader.name}`;
  }

  // --- PostgreSQL down -------------------------------------------------------------------------

  private async handleStopped(cluster: ClusterView): Promise<string> {
    this.snapshotState.status = undefined;
    const holder = cluster.leader?.holder;
    if (holder === this.options.name) {
      // Our primary crashed: restart in place (same timeline) while we still hold the lock.
      this.crashedSince ??= performance.now();
      const spent = (performance.now() - this.crashedSince) / 1000;
      // primary_start_timeout 0 means fail over at once instead of restarting (Patroni's semantics).
      if (this.config.primary_start_timeout > 0 && spent <= this.config.primary_start_timeout) {
        const renewal = await this.renewLock(undefined);
        if (renewal === 'lost') return this.lockLost('failed to update leader lock while restarting');
        if (renewal === 'unreachable') return this.handleDcsError(new Error('leader lease renewal failed'));
        this.pg.writeConfig(undefined, false);
        const budget = Math.max(1, Math.min(Math.floor(this.config.ttl / 3), Math.ceil(this.config.primary_start_timeout - spent) || 1));
        await this.pg.start(budget);
        return 'restarted the crashed primary in place';
      }
      if (this.snapshotState.paused) return 'paused: not releasing the lock of the primary that does not start';
      await this.dcs.deleteLeader(cluster.leader?.optime);
      this.setFence(0);
      this.crashedSince = undefined;
      this.gaveUpLockAt = performance.now();
      return 'released the leader lock: the primary did not start within primary_start_timeout';
    }
    const leader = this.leaderAddress(cluster);
    await this.startAsReplica(leader, cluster);
    return leader ? `started as a replica of ${leader.name}` : 'started as a replica without a leader';
  }

  /** Running but not answering SQL (starting, recovering). Hold the lock if we have it. */
  private async handleUnresponsive(cluster: ClusterView): Promise<string> {
    if (cluster.leader?.holder === this.options.name) {
      const renewal = await this.renewLock(undefined);
      if (renewal === 'lost') return this.lockLost('failed to update leader lock');
      if (renewal === 'unreachable') return this.handleDcsError(new Error('leader lease renewal failed'));
      return 'PostgreSQL is starting; keeping the leader lock';
    }
    return 'PostgreSQL is starting';
  }

  // --- PostgreSQL up ---------------------------------------------------------------------------

  private async handleRunning(cluster: ClusterView, status: ServerStatus): Promise<string> {
    const isPrimary = !status.inRecovery;
    const leader = cluster.leader;
    if (leader?.holder === this.options.name) {
      // A due switchover goes first: slots, renewal, history and sync upkeep would only delay the clean stop.
      if (isPrimary && this.handOverDue(cluster)) return this.handOver(cluster, cluster.failover!.member!);
      // Slots of members silent for longer than member_slots_ttl are dropped so WAL cannot pile up for ever.
      const slotMembers = cluster.members.filter((m) => Date.now() - m.heartbeat < memberSlotsTtlMs).map((m) => m.name);
      const slots = isPrimary && this.config.use_slots ? await this.pg.syncSlots(slotMembers).catch(() => undefined) : undefined;
      const failsafe = this.config.failsafe_mode ? Object.fromEntries(cluster.members.map((m) => [m.name, m.api_url])) : null;
      const renewal = await this.renewLock(isPrimary ? status.location : undefined, slots, failsafe);
      if (renewal === 'lost') return this.lockLost('failed to update leader lock in DCS');
      if (renewal === 'unreachable') return this.handleDcsError(new Error('leader lease renewal failed'));
      if (!isPrimary) {
        await this.promote(cluster, status);
        return 'promoted self to leader because I had the lock';
      }
      await this.maintainHistory(cluster, status).catch(() => undefined);
      await this.maintainSync(cluster, status).catch((error: Error) => this.options.logger.warn({ err: error.message }, 'synchronous standby upkeep failed'));
      const manual = await this.manualFailoverOnLeader(cluster);
      if (manual) return manual;
      return 'no action: I am the leader with the lock';
    }
    if (leader) {
      if (isPrimary) {
        await this.demoteAndFollow(this.leaderAddress(cluster), cluster);
        return `demoted self because ${leader.holder} holds the lock`;
      }
      const takeover = await this.takeoverOnCrash(cluster, leader, status);
      if (takeover) return takeover;
      const address = this.leaderAddress(cluster);
      const current = this.pg.followingLeader();
      if (address && (!current || current.host !== address.host || current.port !== address.port)) {
        await this.pg.follow(address);
        this.notStreamingSince = performance.now();
        return `now following ${address.name}`;
      }
      if (status.replicationState === 'streaming') {
        this.notStreamingSince = undefined;
      } else if (address && this.config.use_rewind && this.leaderTimeline(cluster) > status.timeline) {
        // A replica that received WAL the new leader never had cannot stream from its new
        // timeline: rewind. Only when the leader is up on a newer timeline (a dead leader is not a reason).
        this.notStreamingSince ??= performance.now();
        const leaderMember = cluster.members.find((m) => m.name === leader.holder);
        const overdue = performance.now() - this.notStreamingSince > Math.max(5000, 3 * this.config.loop_wait * 1000);
        const leaderUp = overdue && leaderMember ? await askPeer(leaderMember, 2000) : undefined;
        if (leaderUp?.reachable && leaderUp.role === 'primary' && (leaderUp.timeline ?? 0) > status.timeline) {
          this.notStreamingSince = undefined;
          this.markDemoted();
          await this.pg.stop('fast');
          await this.startAsReplica(address, cluster, true);
          return `rewound to follow ${address.name}: it was not streaming`;
        }
      }
      return `no action: I am a replica following ${leader.holder}`;
    }
    return this.race(cluster, status);
  }

  /**
   * Early takeover (ADR 0404): the kubelet reports the leader's container dead and neither its
   * PostgreSQL nor its REST API port accepts connections, so no writable primary can exist there
   * and none can come back without a lease write; race now with a CAS on the version judged.
   */
  private async takeoverOnCrash(cluster: ClusterView, leader: LeaderRecord, status: ServerStatus): Promise<string | undefined> {
    const judge = this.options.crashJudge;
    const member = cluster.members.find((m) => m.name === leader.holder);
    if (!judge || !member || !judge.kubeletSaysDead(member)) return undefined;
    const evidence = await judge.evidence(member);
    if (!leaderCrashed(evidence)) {
      // Once per leader and verdict, not every loop until the lease lapses.
      const seen = JSON.stringify([leader.holder, evidence]);
      if (seen !== this.lastDisputedEvidence) {
        this.lastDisputedEvidence = seen;
        this.options.logger.info({ leader: leader.holder, evidence }, 'leader pod reported dead but not every source agrees; waiting for the lease to expire');
      }
      return undefined;
    }
    return this.race(cluster, status, { leader, evidence });
  }

  private async race(cluster: ClusterView, status: ServerStatus, takeover?: Takeover): Promise<string> {
    const isPrimary = !status.inRecovery;
    if (!raceAllowed(cluster.config, cluster.failover)) return 'paused: no automatic failover';
    const contact = this.failsafeContact;
    if (!isPrimary && contact && contact.name !== this.options.name && performance.now() - contact.at < this.config.ttl * 1000) {
      return `no race: ${contact.name} confirmed it is alive through failsafe`;
    }
    const started = performance.now();
    // The named candidate of a manual failover wins without comparing positions (raceVerdict), so
    // it skips the round trip to the peers; quorum mode and early takeover still need their answers.
    const named = cluster.failover?.member === this.options.name && cluster.sync?.quorum === undefined && !takeover;
    const peers = named ? [] : await askPeers(otherMembers(cluster, this.options.name), 2000);
    const asked = performance.now();
    if (this.gaveUpLockAt !== undefined && started - this.gaveUpLockAt < this.config.ttl * 1000 && peers.some((p) => p.reachable && !p.nofailover)) {
      return 'no race: this member just gave up the lock because its primary did not start';
    }
    const self = { name: this.options.name, walPosition: walPositionOf(status), timeline: status.timeline, nofailover: noFailover(this.options.tags), isPrimary };
    const general = raceVerdict(self, cluster, this.config, peers);
    // Quorum commit: also a named candidate must prove it holds every acknowledged commit.
    const verdict = general.ok ? quorumVerdict(self, cluster.sync, peers) : general;
    if (!verdict.ok && general.ok && cluster.failover?.member === self.name) {
      // A named candidate without the quorum proof gives the manual failover up: otherwise every
      // other member keeps waiting for it and nobody leads (the normal race still needs the proof).
      await this.dcs.setFailover(undefined).catch(() => undefined);
      return `gave up the manual failover to me: ${verdict.reason}`;
    }
    const acquireStartedEpoch = Date.now();
    const acquire = (): Promise<boolean> =>
      takeover ? this.dcs.takeOverLeader(takeover.leader, walPositionOf(status)) : this.dcs.attemptToAcquireLeader(walPositionOf(status));
    if (verdict.ok && (await acquire())) {
      this.renewed(acquireStartedEpoch);
      if (!isPrimary) {
        const acquired = performance.now();
        await this.promote(cluster, status);
        this.options.logger.info(
          { askPeersMs: Math.round(asked - started), acquireMs: Math.round(acquired - asked), promoteMs: Math.round(performance.now() - acquired), evidence: takeover?.evidence },
          'won the leader race',
        );
        if (cluster.failover) await this.dcs.setFailover(undefined).catch(() => undefined);
        return takeover
          ? `promoted self to leader: took over the lock of crashed ${takeover.leader.holder}`
          : 'promoted self to leader by acquiring session lock';
      }
      return 'acquired session lock as a leader';
    }
    if (takeover) return `no early takeover of crashed ${takeover.leader.holder} (${verdict.ok ? 'lock changed' : verdict.reason})`;
    if (isPrimary) {
      await this.demoteAndFollow(undefined, cluster);
      return `demoted self: lost the leader race (${verdict.ok ? 'lock taken' : verdict.reason})`;
    }
    return `following a new leader after a failed race (${verdict.ok ? 'lock taken' : verdict.reason})`;
  }

  // --- transitions -----------------------------------------------------------------------------

  private async promote(cluster: ClusterView, status: ServerStatus): Promise<void> {
    // The fence deadline was set by the lock write that preceded this call.
    await this.pg.promote();
    this.snapshotState.offlineRole = 'primary';
    // Show the new role at once: health checks and the pod label follow the writable server.
    this.snapshotState.status = (await this.pg.status().catch(() => undefined)) ?? this.snapshotState.status;
    await this.options.setRoleLabel?.('primary');
    // pg_rewind on the old primary needs a checkpoint on the new timeline.
    await this.pg.query('CHECKPOINT').catch(() => undefined);
    await this.pg.dropInactiveSlots().catch(() => undefined);
    const after = await this.pg.status().catch(() => undefined);
    if (after) this.snapshotState.status = after;
    if (after) await this.maintainHistory(cluster, after).catch(() => undefined);
    this.options.logger.info({ timeline: after?.timeline ?? status.timeline }, 'promoted');
  }

  /**
   * A failover key seen by the leader: step down now (switchover to the named member, or to any
   * eligible member when none is named), later (scheduled_at), or clean up a key that is stale,
   * names ourselves as the target, or names another leader.
   */
  private async manualFailoverOnLeader(cluster: ClusterView): Promise<string | undefined> {
    const failover = cluster.failover;
    if (!failover) return undefined;
    const self = this.options.name;
    if (failover.member === self || (failover.leader && failover.leader !== self) || (!failover.member && !failover.leader)) {
      await this.dcs.setFailover(undefined);
      return undefined;
    }
    const timing = manualFailoverTiming(failover, new Date(), this.config.loop_wait, this.snapshotState.paused);
    if (timing.kind === 'stale') {
      await this.dcs.setFailover(undefined);
      return 'removed a stale scheduled switchover';
    }
    if (timing.kind === 'wait') {
      this.scheduleSoon(Math.min(timing.ms, this.config.loop_wait * 1000));
      return `switchover to ${failover.member ?? 'any member'} scheduled at ${failover.scheduled_at}`;
    }
    if (failover.member && !cluster.members.some((m) => m.name === failover.member)) {
      await this.dcs.setFailover(undefined);
      return `removed a switchover to unknown member ${failover.member}`;
    }
    return this.handOver(cluster, failover.member ?? 'any eligible member');
  }

  /** Whether this leader should hand over now: a failover key naming a known member, for us, due. */
  private handOverDue(cluster: ClusterView): boolean {
    const failover = cluster.failover;
    const self = this.options.name;
    if (cluster.leader?.holder !== self || !failover?.member || failover.member === self) return false;
    if (failover.leader && failover.leader !== self) return false;
    if (!cluster.members.some((m) => m.name === failover.member)) return false;
    return manualFailoverTiming(failover, new Date(), this.config.loop_wait, this.snapshotState.paused).kind === 'now';
  }

  /** Switchover: stop cleanly (shutdown checkpoint), release the lock; the loop then follows the candidate. */
  private async handOver(cluster: ClusterView, candidate: string): Promise<string> {
    const status = await this.pg.status().catch(() => undefined);
    this.markDemoted();
    await this.pg.stop('fast');
    await this.dcs.deleteLeader(walPositionOf(status) || undefined);
    this.setFence(0);
    await this.options.setRoleLabel?.('replica');
    void cluster;
    return `stepped down for a switchover to ${candidate}`;
  }

  /** From here on the API must not call us primary, even while PostgreSQL is still stopping. */
  private markDemoted(): void {
    this.snapshotState.status = undefined;
    this.snapshotState.offlineRole = 'demoted';
  }

  private async demoteAndFollow(leader: LeaderAddress | undefined, cluster: ClusterView): Promise<void> {
    this.markDemoted();
    await this.pg.stop('immediate');
    this.setFence(0);
    await this.options.setRoleLabel?.('replica');
    await this.startAsReplica(leader, cluster, true);
  }

  /** DCS gone for retry_timeout: stop accepting writes but keep serving reads. */
  private async demoteOffline(): Promise<void> {
    this.markDemoted();
    await this.pg.stop('fast');
    this.setFence(0);
    this.pg.writeConfig(undefined, true);
    await this.pg.start(60);
    this.snapshotState.offlineRole = 'demoted';
    this.options.setRoleLabel?.('replica').catch(() => undefined);
  }

  private async lockLost(reason: string): Promise<string> {
    const status = this.pg.isRunning() ? await this.pg.status().catch(() => undefined) : undefined;
    if (status && !status.inRecovery) await this.demoteAndFollow(undefined, this.snapshotState.cluster ?? { history: [], members: [] });
    return `demoted self: ${reason}`;
  }

  /**
   * Starts a stopped data directory as a replica. A former primary is first rewound against the
   * leader (its timeline may have diverged); when rewind fails the data directory is re-cloned.
   */
  private async startAsReplica(leader: LeaderAddress | undefined, cluster: ClusterView, wasPrimary = false): Promise<void> {
    this.setFence(0);
    const control = await this.pg.controlData();
    const formerPrimary = wasPrimary || control?.state === 'in production' || control?.state === 'shut down';
    if (leader && formerPrimary && this.config.use_rewind) {
      const ok = await this.pg.rewind(leader).catch((error: Error) => {
        this.options.logger.error({ err: error.message }, 'rewind failed');
        return false;
      });
      if (!ok) {
        this.options.logger.warn('re-cloning the data directory from the leader');
        await this.pg.basebackup(leader);
      }
    } else if (leader && formerPrimary && !this.config.use_rewind) {
      await this.pg.basebackup(leader);
    }
    this.pg.writeConfig(leader, true);
    await this.pg.start(60);
    this.snapshotState.offlineRole = 'replica';
    void cluster;
  }

  // --- synchronous replication ---------------------------------------------------------------

  private async maintainSync(cluster: ClusterView, status: ServerStatus): Promise<void> {
    this.syncChangeLsn = await runSyncUpkeep({
      self: this.options.name,
      cluster,
      status,
      config: this.config,
      dcs: this.dcs,
      pg: this.pg,
      logger: this.options.logger,
      changeLsn: this.syncChangeLsn,
    });
  }

  // --- bookkeeping -----------------------------------------------------------------------------

  /** 'lost': someone else holds the lock now; 'unreachable': the API did not answer (retry, failsafe or demote by time). */
  private async renewLock(optime: number | undefined, slots?: Record<string, number>, failsafe?: Record<string, string> | null): Promise<'ok' | 'lost' | 'unreachable'> {
    const startedEpoch = Date.now();
    try {
      if (!(await this.dcs.updateLeader(optime, slots, failsafe))) return 'lost';
    } catch {
      return 'unreachable';
    }
    this.renewed(startedEpoch);
    return 'ok';
  }

  private renewed(startedEpoch = Date.now()): void {
    this.lastRenewMono = performance.now() - (Date.now() - startedEpoch);
    this.setFence(fenceDeadlineFor(startedEpoch, this.config.ttl));
  }

  private setFence(epochMs: number): void {
    if (!this.options.fenceFile) return;
    try {
      writeFenceDeadline(this.options.fenceFile, epochMs);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not write the fence deadline');
    }
  }

  /** Keeps the DCS history in step with the timeline history files of the primary. */
  private async maintainHistory(cluster: ClusterView, status: ServerStatus): Promise<void> {
    if (status.timeline <= 1) return;
    const known = cluster.history.at(-1)?.[0] ?? 0;
    if (known >= status.timeline - 1) return;
    const lines = await readTimelineHistory(this.pg, status.timeline);
    const entries = lines.map(([tl, lsn, reason]) => {
      const existing = cluster.history.find((h) => h[0] === tl);
      return existing ?? ([tl, lsn, reason, new Date().toISOString(), this.options.name] as [number, number, string, string, string]);
    });
    await this.dcs.setHistory(entries.slice(-100));
  }

  private async publish(cluster: ClusterView): Promise<void> {
    if (this.dcsUnreachable) return;
    const status = this.snapshotState.status;
    const role: Role = status && !status.inRecovery && this.dcs.isLeader() ? 'primary' : 'replica';
    const record: MemberRecord = {
      name: this.options.name,
      conn_url: `postgres://${this.pg.settings.connectHost}:${this.pg.settings.port}/postgres`,
      api_url: this.options.apiUrl,
      host: this.pg.settings.connectHost,
      port: this.pg.settings.port,
      role: status ? (status.inRecovery ? 'replica' : 'primary') : this.snapshotState.offlineRole,
      state: status?.replicationState ?? dbStateText(this.pg.state),
      timeline: status?.timeline,
      xlog_location: status ? walPositionOf(status) : undefined,
      receive_lsn: status?.receivedLocation,
      replay_lsn: status?.replayedLocation,
      replication_state: status?.replicationState,
      tags: this.options.tags,
      version: this.options.version,
      heartbeat: Date.now(),
      pending_restart: this.snapshotState.pendingRestart || undefined,
    };
    await this.dcs.touchMember(record).catch((error: Error) => this.options.logger.warn({ err: error.message }, 'could not publish the member record'));
    if (status) await this.options.setRoleLabel?.(role);
    void cluster;
  }

  private leaderTimeline(cluster: ClusterView): number {
    const holder = cluster.leader?.holder;
    const member = cluster.members.find((m) => m.name === holder);
    return member?.role === 'primary' && member.state === 'running' ? (member.timeline ?? 0) : 0;
  }

  private leaderAddress(cluster: ClusterView): LeaderAddress | undefined {
    const holder = cluster.leader?.holder;
    if (!holder) return undefined;
    const member = cluster.members.find((m) => m.name === holder);
    if (!member) return undefined;
    return { name: member.name, host: member.host, port: member.port };
  }
}
