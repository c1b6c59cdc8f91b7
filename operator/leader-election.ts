import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { apiStatusCode, describeApiError } from '../lib/kube/client.js';
import type { Logger } from '../lib/log.js';

/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go semantics: a holder renews every
 * retryPeriod and gives up leadership when it could not renew for renewDeadline; others take over
 * only after they have seen the same record unchanged for leaseDuration by their own clock (so
 * clock skew between machines does not matter). Every write is a compare-and-swap on
 * resourceVersion; a 409 means someone else won the race.
 */
export interface LeaderElectionOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  now?: () => number;
}

export interface LeaderTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const defaultLeaderTimings = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

export class LeaderElector {
  private leading = false;
  private stopped = false;
  /** The acquire/renew in flight, so stop() releases only after it (else its write would 409). */
  private attempt?: Promise<boolean>;
  private timer: NodeJS.Timeout | undefined;
  private observedRecord = '';
  private observedAt = 0;
  private lastRenew = 0;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? defaultLeaderTimings.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs ?? defaultLeaderTimings.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs ?? defaultLeaderTimings.retryPeriodMs;
    this.now = options.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  /**
   * Stops trying; a leader releases the Lease (holder cleared) so a successor need not wait it
   * out. `release: false` leaves the Lease as a crashed process would.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.setLeading(false);
    if (options.release === false) return;
    await this.attempt?.catch(() => undefined);
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      lease.spec = {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: new V1MicroTime(this.now()),
        acquireTime: microTime(lease.spec.acquireTime),
      };
      await this.options.api.replaceNamespacedLease({ name: this.options.name, namespace: this.options.namespace, body: lease });
    } catch (err) {
      this.options.logger.warn({ err: describeApiError(err) }, 'could not release the leader lease');
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      this.attempt = this.tryAcquireOrRenew();
      const ok = await this.attempt;
      // stop() may have run while this attempt was in flight: never start leading after it.
      if (this.stopped) return;
      if (ok) this.lastRenew = this.now();
      if (ok && !this.leading) this.setLeading(true);
    } catch (err) {
      this.options.logger.warn({ err: describeApiError(err) }, 'leader election attempt failed');
    }
    if (this.leading && this.now() - this.lastRenew > this.renewDeadlineMs) {
      this.options.logger.error({ lease: this.options.name }, 'could not renew the leader lease within the deadline; stepping down');
      this.setLeading(false);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.retryPeriodMs);
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.logger.info({ identity: this.options.identity, lease: this.options.name, leading }, leading ? 'became leader' : 'stopped leading');
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.options.api.readNamespacedLease({ name: this.options.name, namespace: this.options.namespace });
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { api, namespace, name, identity } = this.options;
    const now = this.now();
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    const lease = await this.read();
    if (!lease) {
      await api.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: new V1MicroTime(now),
            renewTime: new V1MicroTime(now),
            leaseTransitions: 0,
          },
        },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${toMillis(spec.renewTime)}|${spec.leaseTransitions ?? 0}`;
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = now;
    }
    const holder = spec.holderIdentity ?? '';
    const heldByMe = holder === identity;
    const observedDuration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (!heldByMe && holder !== '' && now < this.observedAt + observedDuration) return false;
    lease.spec = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: heldByMe ? microTime(spec.acquireTime) : new V1MicroTime(now),
      renewTime: new V1MicroTime(now),
      leaseTransitions: heldByMe ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    try {
      await api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (err) {
      if (apiStatusCode(err) === 409) return false;
      throw err;
    }
    return true;
  }
}

function toMillis(value: Date | string | undefined): number {
  if (!value) return 0;
  return value instanceof Date ? value.getTime() : Date.parse(value);
}

function microTime(value: Date | string | undefined): V1MicroTime | undefined {
  return value ? new V1MicroTime(toMillis(value)) : undefined;
}
