import { hangVerdict, heartbeatIntervalMs, nextPrimaryAnswer, probeOutcome } from './hang-rules.js';
import { primaryAnswered, type LoopState } from '../state.js';

/**
 * The leader's heartbeat on its own server: every second, while this member holds the lock and
 * its postmaster runs, one question over a new connection (a postmaster frozen alone accepts none
 * while old sessions still commit). The HA loop asks once per loop_wait, so silence judged from
 * its probes alone starts up to a loop late; the heartbeat keeps the last answer at most a second
 * old and wakes the loop the moment silence reaches the hang timeout.
 *
 * Silence is the time since the last answer: each question may wait the whole hang timeout to
 * connect and as long again to be answered, so a server that answers slowly keeps answering and is
 * never judged hung; only one that answers nothing for the timeout is.
 */

/** The server the heartbeat asks (PostgresInstance). */
export interface HeartbeatServer {
  postmasterPid(): number | undefined;
  inRecovery(waitMs: number): Promise<boolean>;
}

/** Where the heartbeat keeps the last answer (the loop state, shared with the cycle's own probe). */
export type AnswerRecord = Pick<LoopState, 'primaryAnswer'>;

export class PrimaryHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private asking = false;
  private timeoutSeconds = 0;
  private reported = false;
  private readonly hungWaiters = new Set<() => void>();

  constructor(
    private readonly server: HeartbeatServer,
    private readonly record: AnswerRecord,
    private readonly onHung: () => void,
  ) {}

  /** Called every cycle: beat while `leading` with a hang timeout in force (seconds, 0: off), else stop. */
  keep(leading: boolean, timeoutSeconds: number): void {
    this.timeoutSeconds = timeoutSeconds;
    if (!leading || timeoutSeconds <= 0) {
      this.stop();
      return;
    }
    if (this.timer) return;
    this.timer = setInterval(() => this.beat(), heartbeatIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.reported = false;
  }

  /** Whether the server counts as hung now. */
  hung(): boolean {
    return hangVerdict(this.record.primaryAnswer, this.server.postmasterPid(), performance.now(), this.timeoutSeconds).kind === 'hung';
  }

  /** Settles once the heartbeat judges the server hung; cancel() drops the wait. */
  untilHung(): { hung: Promise<void>; cancel: () => void } {
    let waiter: () => void = () => undefined;
    const hung = new Promise<void>((resolve) => {
      waiter = resolve;
      this.hungWaiters.add(resolve);
    });
    return { hung, cancel: () => this.hungWaiters.delete(waiter) };
  }

  private beat(): void {
    if (this.hung()) {
      for (const waiter of this.hungWaiters) waiter();
      this.hungWaiters.clear();
      if (!this.reported) this.onHung();
      this.reported = true;
    } else {
      this.reported = false;
    }
    if (this.asking) return;
    const pid = this.server.postmasterPid();
    if (pid === undefined) return;
    this.asking = true;
    this.server
      .inRecovery(this.timeoutSeconds * 1000)
      .then(
        (recovery) => this.note(pid, 'answered', !recovery),
        (error: unknown) => this.note(pid, probeOutcome(undefined, error), false),
      )
      .finally(() => {
        this.asking = false;
      });
  }

  private note(pid: number, outcome: ReturnType<typeof probeOutcome>, isPrimary: boolean): void {
    // A question the previous postmaster answered says nothing about the one running now.
    if (this.server.postmasterPid() !== pid) return;
    primaryAnswered(this.record, nextPrimaryAnswer(this.record.primaryAnswer, pid, outcome, isPrimary, performance.now()));
  }
}
