/**
 * Runs pgBackRest beside the HA loop without ever blocking it: the stanza is created (and the
 * archive checked) on the primary in the background, backups run one at a time, and the outcome
 * of each is kept for GET /backup, where the operator reads it for its BackupReady condition.
 */
import type { Logger } from '../../../lib/log.js';
import type { BackupType, PgBackRest } from './engine.js';
import { setStartedSince, type BackupSet, type StanzaInfo } from './info.js';
import type { PrimarySource } from './tls-server.js';
import { SourceConfigUpkeep } from './source-config.js';
import { restoreWindow, type RepositoryWindow } from './window.js';

export interface Outcome {
  at: string;
  ok: boolean;
  message: string;
}

export interface KeeperStatus {
  stanza: string;
  /** The stanza exists in every repository and this primary's archiving into it was checked. */
  stanzaReady: boolean;
  /** The last stanza-create/check attempt (its error when it failed). */
  archive?: Outcome;
  running?: { type: BackupType; repository: number; startedAt: string; fromStandby?: boolean };
  /** The last backup this member ran: startedAt is what POST /backup answered, set what pgBackRest lists for it. */
  lastBackup?: Outcome & { type: BackupType; repository: number; startedAt: string; fromStandby?: boolean; set?: BackupSet };
  /** When the last successful backup finished. */
  lastSuccessAt?: string;
  /** Set while bootstrapping from a repository failed (the reason). */
  restore?: Outcome;
}

export type StartResult = { started: true; startedAt: string } | { started: false; reason: 'busy' | 'stanza-not-ready' };

/** How long GET /backup reuses a pgbackrest info outcome. */
export const listingCacheMs = 5000;

const retryAfterMs = (failures: number): number => Math.min(60_000, 2000 * 2 ** Math.min(failures, 5));

export class BackupKeeper {
  private stanzaReady = false;
  private archive: Outcome | undefined;
  private inFlight: Promise<void> | undefined;
  private failures = 0;
  private nextTryAt = 0;
  private running: KeeperStatus['running'];
  private lastBackup: KeeperStatus['lastBackup'];
  private lastSuccessAt: string | undefined;
  private restoreOutcome: Outcome | undefined;
  /** The last listing pgBackRest gave (metrics read it; no pgBackRest call per scrape). */
  private lastInfo: StanzaInfo | undefined;
  private windowInFlight: Promise<RepositoryWindow[]> | undefined;
  /** source.conf of a standby cluster from a repository: present only while it follows its source. */
  readonly sourceConfig: SourceConfigUpkeep;
  /** GET /backup's listing: in flight (at = +Infinity) or settled at `at`. */
  private listing: { at: number; outcome: Promise<StanzaInfo> } | undefined;

  constructor(
    readonly engine: PgBackRest,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.sourceConfig = new SourceConfigUpkeep(engine, logger);
  }

  /** Each cycle on the primary: create the stanza and check archiving until that succeeded once. */
  onPrimary(): void {
    if (this.stanzaReady || this.inFlight || this.now() < this.nextTryAt) return;
    this.inFlight = this.ensureStanza().finally(() => (this.inFlight = undefined));
  }

  private async ensureStanza(): Promise<void> {
    try {
      this.engine.writeConfig();
      await this.engine.stanzaCreate();
      await this.engine.check();
      this.stanzaReady = true;
      this.failures = 0;
      this.archive = { at: new Date(this.now()).toISOString(), ok: true, message: `stanza ${this.engine.stanza} ready, WAL archiving checked` };
      this.logger.info({ stanza: this.engine.stanza }, 'pgBackRest stanza ready and archiving checked');
    } catch (error) {
      this.failures += 1;
      this.nextTryAt = this.now() + retryAfterMs(this.failures);
      const message = (error as Error).message;
      if (this.archive?.message !== message) this.logger.warn({ err: message }, 'pgBackRest stanza or archive check failed; retrying');
      this.archive = { at: new Date(this.now()).toISOString(), ok: false, message };
    }
  }

  /**
   * Starts a backup in the background; at most one runs at a time. With `primary`, this member
   * is a standby and the backup is of its files (the primary checked its stanza, not this member).
   */
  startBackup(type: BackupType, repository = 1, primary?: PrimarySource): StartResult {
    if (this.running) return { started: false, reason: 'busy' };
    if (!this.stanzaReady && !primary) return { started: false, reason: 'stanza-not-ready' };
    const startedAt = new Date(this.now()).toISOString();
    const fromStandby = primary ? { fromStandby: true } : {};
    this.running = { type, repository, startedAt, ...fromStandby };
    void this.engine
      .backup(type, repository, primary)
      .then(async () => ({ ok: true, message: `${type} backup finished`, set: await this.findSet(repository, startedAt) }))
      .catch((error: Error) => ({ ok: false, message: error.message, set: undefined }))
      .then(({ set, ...result }) => {
        this.lastBackup = { at: new Date(this.now()).toISOString(), type, repository, startedAt, ...fromStandby, ...result, ...(set ? { set } : {}) };
        if (result.ok) this.lastSuccessAt = this.lastBackup.at;
        this.running = undefined;
        if (result.ok) this.logger.info({ type, repository, ...fromStandby }, 'backup finished');
        else this.logger.error({ type, repository, ...fromStandby, err: result.message }, 'backup failed');
      });
    return { started: true, startedAt };
  }

  /** The set pgBackRest lists for the backup started at `startedAt` (undefined when info fails). */
  private async findSet(repository: number, startedAt: string): Promise<BackupSet | undefined> {
    const info = await this.info().catch(() => undefined);
    return info ? setStartedSince(info, repository, startedAt) : undefined;
  }

  /** The outcome of bootstrapping from a repository (a failure is retried after a pause). */
  recordRestore(ok: boolean, message: string): void {
    this.restoreOutcome = { at: new Date(this.now()).toISOString(), ok, message };
  }

  /** The last restore failure, if the last attempt failed. */
  restoreFailure(): Outcome | undefined {
    return this.restoreOutcome && !this.restoreOutcome.ok ? this.restoreOutcome : undefined;
  }

  status(): KeeperStatus {
    return {
      stanza: this.engine.stanza,
      stanzaReady: this.stanzaReady,
      ...(this.archive ? { archive: this.archive } : {}),
      ...(this.running ? { running: this.running } : {}),
      ...(this.lastBackup ? { lastBackup: this.lastBackup } : {}),
      ...(this.lastSuccessAt ? { lastSuccessAt: this.lastSuccessAt } : {}),
      ...(this.restoreOutcome ? { restore: this.restoreOutcome } : {}),
    };
  }

  async info(): Promise<StanzaInfo> {
    this.lastInfo = await this.engine.info();
    this.listing = { at: this.now(), outcome: Promise.resolve(this.lastInfo) };
    return this.lastInfo;
  }

  /**
   * The listing for GET /backup, which anyone may ask: concurrent requests share one
   * `pgbackrest info` and its outcome (a failure too) serves for listingCacheMs, so a burst of
   * requests cannot start one process each and starve the loop and /liveness.
   */
  sharedInfo(): Promise<StanzaInfo> {
    if (this.listing && this.now() - this.listing.at < listingCacheMs) return this.listing.outcome;
    const outcome = this.engine.info();
    this.listing = { at: Number.POSITIVE_INFINITY, outcome };
    const settle = (): void => {
      if (this.listing?.outcome === outcome) this.listing = { at: this.now(), outcome };
    };
    outcome.then((info) => {
      this.lastInfo = info;
      settle();
    }, settle);
    return outcome;
  }

  /** The listing last read (GET /backup, the end of a backup), if any. */
  cachedInfo(): StanzaInfo | undefined {
    return this.lastInfo;
  }

  /**
   * The restorable window of each repository (one computation at a time: concurrent callers
   * share it, so repeated requests cannot pile up archive-get and pg_waldump runs).
   */
  restoreWindow(waldump: string): Promise<RepositoryWindow[]> {
    this.windowInFlight ??= this.info()
      .then((info) => restoreWindow({ engine: this.engine, waldump, runAs: this.engine.runAs }, info))
      .finally(() => (this.windowInFlight = undefined));
    return this.windowInFlight;
  }

  /** Waits for the background stanza work (tests and a clean shutdown). */
  async settle(): Promise<void> {
    await this.inFlight;
  }
}
