/**
 * Keeps this member's pgBackRest TLS certificates current: when the mounted CA Secret changes
 * (the operator staged or switched to a new CA) or a certificate nears its end, the member issues
 * new ones from the signing CA and restarts its TLS server, which reads them only at start.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from '../../../lib/log.js';
import { certificateNotAfter } from '../../../lib/tls-certificates.js';
import type { RunAs } from '../postgres/runner.js';
import type { TlsServerConfig } from '../../../api/ha-node/backup-settings.js';
import { issueMemberCertificates, type MemberTlsFiles } from './tls-server.js';

/** Re-issue when a member certificate has less than this left (it lives 825 days, or as long as its CA). */
const renewBeforeMs = 30 * 24 * 3600_000;

/** A digest of the mounted CA files: any change (staging, switching, pruning) calls for new files. */
export function caFingerprint(tls: TlsServerConfig): string {
  return createHash('sha256').update(readFileSync(tls.caFile)).update('\0').update(readFileSync(tls.caKeyFile)).digest('hex');
}

/** Whether this member's certificates must be issued again: a new CA Secret, or the first of them ending soon. */
export function renewalDue(issuedFrom: string | undefined, current: string, validUntilMs: number | undefined, now = new Date()): boolean {
  return issuedFrom !== current || validUntilMs === undefined || validUntilMs - now.getTime() < renewBeforeMs;
}

/** When the first of this member's certificates ends (read once, after they are issued). */
function earliestNotAfter(files: MemberTlsFiles): number {
  return Math.min(...[files.serverCert, files.clientCert].map((file) => certificateNotAfter(readFileSync(file, 'utf8')).getTime()));
}

export interface RestartableServer {
  restart(): void;
}

export class MemberTlsRenewal {
  private timer: NodeJS.Timeout | undefined;
  private issuedFrom: string | undefined;
  private validUntilMs: number | undefined;

  constructor(
    private readonly tls: TlsServerConfig,
    private readonly podIp: string,
    private readonly files: MemberTlsFiles,
    private readonly runAs: RunAs | undefined,
    private readonly logger: Logger,
  ) {}

  /** Issues this member's certificates when due; true when it did. Errors are the caller's. */
  renewIfDue(): boolean {
    const current = caFingerprint(this.tls);
    if (!renewalDue(this.issuedFrom, current, this.validUntilMs)) return false;
    issueMemberCertificates(this.tls, this.podIp, this.files, this.runAs);
    this.issuedFrom = current;
    this.validUntilMs = earliestNotAfter(this.files);
    return true;
  }

  /** Checks every `intervalMs`; after new certificates the server restarts to serve them. */
  follow(server: RestartableServer, intervalMs = 30_000): void {
    this.timer = setInterval(() => {
      try {
        if (this.renewIfDue()) {
          this.logger.info(
            { notAfter: new Date(this.validUntilMs ?? 0).toISOString() },
            'issued new pgBackRest TLS certificates from the cluster CA; restarting the TLS server',
          );
          server.restart();
        }
      } catch (error) {
        // The mounted files may be mid-update; the next check tries again, the old files stay in use.
        this.logger.warn({ err: (error as Error).message }, 'cannot renew the pgBackRest TLS certificates yet');
      }
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
