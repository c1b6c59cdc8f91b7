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
}

export type RefusalResponse = 401 | 403 | 429 | 500 | 503 | 'reset' | 'hang';

export interface RefusalRule {
  /** Matches the bearer token exactly. */
  token?: string;
  /** Matches the client certificate CN exactly. */
  commonName?: string;
  /** Matches when the User-Agent contains this text. */
  userAgent?: string;
  /** What the refused client gets (default: the connection is reset). */
  response?: RefusalResponse;
}

export type PauseMode = 'hang' | 'unavailable';

export interface FaultControl {
  /** Refuses every request from matching clients until the returned function is called (and cuts their watches). */
  refuse(rule: RefusalRule): () => void;
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

export class Faults {
  private readonly rules = new Set<RefusalRule>();
  private pauseMode: PauseMode | undefined;
  private readonly waiting: Array<() => void> = [];
  private readonly watches = new Map<number, { identity: string; stop: (reset: boolean) => void }>();
  private nextWatch = 1;

  constructor(private readonly compact: () => void) {}

  get paused(): boolean {
    return this.pauseMode !== undefined;
  }

  get mode(): PauseMode | undefined {
    return this.pauseMode;
  }

  refusalFor(id: ClientIdentity): RefusalResponse | undefined {
    for (const rule of this.rules) {
      if (rule.token !== undefined && rule.token !== id.token) continue;
      if (rule.commonName !== undefined && rule.commonName !== id.commonName) continue;
      if (rule.userAgent !== undefined && !(id.userAgent ?? '').includes(rule.userAgent)) continue;
      if (rule.token === undefined && rule.commonName === undefined && rule.userAgent === undefined) continue;
      return rule.response ?? 'reset';
    }
    return undefined;
  }

  /** Runs `fn` now, or when the pause ends. */
  whenRunning(fn: () => void): void {
    if (this.pauseMode === undefined) fn();
    else this.waiting.push(fn);
  }

  trackWatch(identity: string, stop: (reset: boolean) => void): () => void {
    const id = this.nextWatch++;
    this.watches.set(id, { identity, stop });
    return () => this.watches.delete(id);
  }

  control(): FaultControl {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const faults = this;
    return {
      refuse: (rule) => {
        this.rules.add(rule);
        for (const w of [...this.watches.values()]) {
          const [kind, ...rest] = w.identity.split(':');
          const value = rest.join(':');
          if ((kind === 'token' && rule.token === value) || (kind === 'cn' && rule.commonName === value)) w.stop(true);
        }
        return () => this.rules.delete(rule);
      },
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
          if (options.identity !== undefined && w.identity !== options.identity) continue;
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
