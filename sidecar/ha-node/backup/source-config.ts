/**
 * The restore source's configuration (source.conf) holds the source repository's credentials. A
 * standby cluster from a repository needs it on every member for as long as the dynamic
 * configuration names a source (any member may lead and read the source's archive); once the
 * cluster is promoted it must not stay on the volume, and a restart must not bring it back.
 */
import { existsSync } from 'node:fs';
import type { Logger } from '../../../lib/log.js';

/** The part of the engine this needs (the real one is PgBackRest). */
export interface SourceConfigFiles {
  readonly paths: { sourceConf: string };
  writeSourceConfig(): void;
  removeSourceConfig(): void;
}

/** What the dynamic configuration says this cycle. */
export type SourceNeed = 'standby' | 'promoted' | 'unknown';

export class SourceConfigUpkeep {
  /** Written in this process since the cluster became (or was found) a standby: credentials read fresh once per start. */
  private written = false;
  private lastError: string | undefined;

  constructor(
    private readonly files: SourceConfigFiles,
    private readonly logger: Logger,
  ) {}

  /**
   * Each cycle. `unknown` (no dynamic configuration yet: before the bootstrap, or the API
   * unreachable) leaves the file as it is; the bootstrap writes it when it restores.
   */
  follow(need: SourceNeed): void {
    try {
      if (need === 'standby' && !this.written) {
        this.files.writeSourceConfig();
        this.written = true;
      } else if (need === 'promoted') {
        this.written = false;
        if (!existsSync(this.files.paths.sourceConf)) return;
        this.files.removeSourceConfig();
        this.logger.info(
          { path: this.files.paths.sourceConf },
          'the cluster follows no source any more: removed the source repository configuration and its credentials',
        );
      }
      this.lastError = undefined;
    } catch (error) {
      const message = (error as Error).message;
      // Tried again next cycle; logged once per distinct failure.
      if (message !== this.lastError) this.logger.error({ err: message, need }, 'cannot keep the source repository configuration');
      this.lastError = message;
    }
  }
}
