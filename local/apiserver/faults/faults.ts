/**
 * Fault injection for tests only; nothing here does anything unless a test calls it (in-process)
 * or the server was started with fault injection enabled (the /_keelson/faults admin hook).
 */
export interface ClientIdentity {
  /** Bearer token, if one was sent. */
  token?: string;
  /** Common name of the client certificate, if one was presented. */
  commonName?: string;
  userAgent?: string;
  /** "namespace/name" of the service account a registered token was issued to. */
  serviceAccount?: string;
  /** "namespace/name" of the pod a registered token is bound to. */
  pod?: string;
}

export type RefusalResponse = 401 | 403 | 429 | 500 | 503 | 'reset' | 'hang';

export interface RefusalRule {
  /** Matches the bearer token exactly. */
  token?: string;
  /** Matches the client certificate CN exactly. */
  commonName?: string;
  /** Matches when the User-Agent contains this text. */
  userAgent?: string;
  /** Matches every token bound to this pod ("namespace/name"). */
  pod?: string;
  /** Matches every token issued to this service account ("namespace/name"). */
  serviceAccount?: string;
  /** What the refused client gets (default: the connection is reset). */
  response?: RefusalResponse;
}

export type PauseMode = 'hang' | 'unavailable';

/** Lifts one refusal; `id` names it for the HTTP hook (`lift`, `refusals`). */
export type Lift = (() => void) & { readonly id: string };

export interface FaultControl {
  /** Refuses every request from matching clients until the returned function is called (and cuts their watches). */
  refuse(rule: RefusalRule): Lift;
  /** Lifts the refusal with this id; false when there is none. */
  lift(id: string): boolean;
  /** The refusals in force, oldest first. */
  refusals(): Array<{ id: string; rule: RefusalRule }>;
  /** Stops answering: requests wait (or get 503 with mode 'unavailable') and watch events are held until resume(). */
  pause(mode?: PauseMode): void;
  resume(): void;
  /**
   * Ends open watches (all, or only those of one identity, e.g. "token:abc"); returns how many.
   * 'close' ends the stream cleanly (clients re-watch); 'reset' destroys the connection.
   */
  dropWatches(options?: { identity?: string; mode?: 'close' | 'reset' }): number;
  /** Forgets the watch history so resuming from an older resourceVersion gets 410 Expired. */
  compactHistory(): void;
  readonly paused: boolean;
}

export function identityLabel(id: ClientIdentity): string {
  return id.token ? `token:${id.token}` : id.commonName ? `cn:${id.commonName}` : 'anonymous';
}

const matchers = ['token', 'commonName', 'userAgent', 'pod', 'serviceAccount'] as const;

/** A rule matches when it names at least one property and every property it names matches. */
export function ruleMatches(rule: RefusalRule, id: ClientIdentity): boolean {
  if (!matchers.some((key) => rule[key] !== undefined)) return false;
  if (rule.token !== undefined && rule.token !== id.token) return false;
  if (rule.commonName !== undefined && rule.commonName !== id.commonName) return false;
  if (rule.userAgent !== undefined && !(id.userAgent ?? '').includes(rule.userAgent)) return false;
  if (rule.pod !== undefined && rule.pod !== id.pod) return false;
  if (rule.serviceAccount !== undefined && rule.serviceAccount !== id.serviceAccount) return false;
  return true;
}

export class Faults {
  private readonly rules = new Map<string, RefusalRule>();
  private nextRule = 1;
  private pauseMode: PauseMode | undefined;
  private readonly waiting: Array<() => void> = [];
  private readonly watches = new Map<number, { identity: ClientIdentity; stop: (reset: boolean) => void }>();
  private nextWatch = 1;

  constructor(private readonly compact: () => void) {}

  get paused(): boolean {
    return this.pauseMode !== undefined;
  }

  get mode(): PauseMode | undefined {
    return this.pauseMode;
  }

  refusalFor(id: ClientIdentity): RefusalResponse | undefined {
    for (const rule of this.rules.values()) if (ruleMatches(rule, id)) return rule.response ?? 'reset';
    return undefined;
  }

  /** Runs `fn` now, or when the pause ends. */
  whenRunning(fn: () => void): void {
    if (this.pauseMode === undefined) fn();
    else this.waiting.push(fn);
  }

  trackWatch(identity: ClientIdentity, stop: (reset: boolean) => void): () => void {
    const id = this.nextWatch++;
    this.watches.set(id, { identity, stop });
    return () => this.watches.delete(id);
  }

  control(): FaultControl {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const faults = this;
    return {
      refuse: (rule) => {
        const id = `refusal-${this.nextRule++}`;
        this.rules.set(id, { ...rule });
        for (const w of [...this.watches.values()]) if (ruleMatches(rule, w.identity)) w.stop(true);
        return Object.assign(() => void this.rules.delete(id), { id });
      },
      lift: (id) => this.rules.delete(id),
      refusals: () => [...this.rules].map(([id, rule]) => ({ id, rule: { ...rule } })),
      pause: (mode = 'hang') => {
        this.pauseMode = mode;
      },
      resume: () => {
        this.pauseMode = undefined;
        for (const fn of this.waiting.splice(0)) fn();
      },
      dropWatches: (options = {}) => {
        let cut = 0;
        for (const w of [...this.watches.values()]) {
          if (options.identity !== undefined && identityLabel(w.identity) !== options.identity) continue;
          w.stop(options.mode === 'reset');
          cut += 1;
        }
        return cut;
      },
      compactHistory: () => this.compact(),
      get paused() {
        return faults.paused;
      },
    };
  }
}
