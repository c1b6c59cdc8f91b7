/**
 * The REST API's certificate (Patroni's restapi certfile/keyfile/cafile/verify_client): read from
 * files (the mounted server Secret, or KEELSON_API_* files), checked every few seconds, and a
 * change swapped into the running server (`setSecureContext`): no restart, the listener stays and
 * connections already open keep their session. Material that does not hold together (a key that
 * does not match, a file missing halfway through an update) is never taken; the one in use stays.
 * Until the first usable material exists the server presents a throwaway self-signed certificate:
 * the kubelet's HTTPS probes (which verify nothing) reach the liveness answer, every client that
 * verifies against the cluster CA refuses it.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as TlsServer } from 'node:tls';
import type { TlsFiles } from '../../../lib/http.js';
import type { Logger } from '../../../lib/log.js';
import { createCertificateAuthority, issueCertificate, type PemPair } from '../../../lib/tls-certificates.js';

/** Patroni's restapi.verify_client: none, optional (a mutating request needs a verified client certificate), required (every connection). */
export const verifyClientModes = ['none', 'optional', 'required'] as const;
export type VerifyClient = (typeof verifyClientModes)[number];

export interface ApiTlsSource {
  certFile: string;
  keyFile: string;
  /** The CA client certificates are verified with (needed unless verifyClient is none). */
  caFile?: string;
  verifyClient: VerifyClient;
}

export interface ApiTlsMaterial {
  cert: string;
  key: string;
  ca?: string;
}

/** The material of `source`, or why it cannot serve. */
export function readApiTlsMaterial(source: ApiTlsSource): ApiTlsMaterial | string {
  const read = (path: string): string | undefined => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  };
  const cert = read(source.certFile);
  const key = read(source.keyFile);
  const ca = source.caFile === undefined ? undefined : read(source.caFile);
  if (cert === undefined) return `${source.certFile} cannot be read`;
  if (key === undefined) return `${source.keyFile} cannot be read`;
  if (source.caFile !== undefined && ca === undefined) return `${source.caFile} cannot be read`;
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) return 'the REST API key does not match its certificate';
  } catch (error) {
    return `the REST API certificate or key cannot be read (${(error as Error).message.slice(0, 100)})`;
  }
  return { cert, key, ...(ca !== undefined ? { ca } : {}) };
}

function placeholderPair(): PemPair {
  return issueCertificate(createCertificateAuthority('keelson ha-node waiting for its certificate', 2), 'waiting-for-certificate', {
    days: 1,
    usage: 'server',
  });
}

export class ApiTls {
  private digest: string | undefined;
  private material: ApiTlsMaterial | undefined;
  private server: TlsServer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastProblem: string | undefined;

  constructor(
    readonly source: ApiTlsSource,
    private readonly logger: Logger,
  ) {}

  /** The certificate in use; undefined while the placeholder serves. */
  current(): ApiTlsMaterial | undefined {
    return this.material;
  }

  /** What the server is created with: the material when usable now, else the placeholder. */
  serverOptions(): TlsFiles {
    this.take();
    const verify = this.source.verifyClient;
    return { ...this.contextOptions(), requestCert: verify !== 'none', rejectUnauthorized: verify === 'required' };
  }

  private contextOptions(): TlsFiles {
    if (!this.material) return { ...placeholderPair(), minVersion: 'TLSv1.2' };
    return { cert: this.material.cert, key: this.material.key, ...(this.material.ca ? { ca: this.material.ca } : {}), minVersion: 'TLSv1.2' };
  }

  /** Reads the files; true when new material was taken. */
  private take(): boolean {
    const material = readApiTlsMaterial(this.source);
    if (typeof material === 'string') {
      if (material !== this.lastProblem) this.logger.warn({ problem: material }, 'REST API certificate files not usable; the one in use stays');
      this.lastProblem = material;
      return false;
    }
    this.lastProblem = undefined;
    const digest = createHash('sha256').update(JSON.stringify(material)).digest('hex');
    if (digest === this.digest) return false;
    this.digest = digest;
    this.material = material;
    return true;
  }

  /** Checks the files now; new material goes into the running server in place. */
  refresh(): void {
    if (!this.take() || !this.server) return;
    this.server.setSecureContext(this.contextOptions());
    this.logger.info('REST API certificate swapped in place');
  }

  /** Keeps `server` serving the current files, checked every `intervalMs`. */
  follow(server: TlsServer, intervalMs = 10_000): void {
    this.server = server;
    this.timer = setInterval(() => this.refresh(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
