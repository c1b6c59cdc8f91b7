/**
 * PostgreSQL's TLS files, from the Secrets the operator mounts (kubernetes.io/tls keys): copied
 * into a private folder, keys 0600 and owned by the account PostgreSQL runs as (PostgreSQL refuses
 * a key others can read, and a Secret volume's files belong to root). A change of the mounted
 * files is copied again and PostgreSQL reloads them on SIGHUP: no restart. Material that does not
 * hold together (a key that does not match its certificate, a file missing halfway through an
 * update) is never copied; the files in use stay until the next check.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { chownSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../lib/log.js';
import type { ParameterValue } from './conf.js';
import type { PeerTlsSettings } from './peer-tls.js';
import { writePrivateFile, type RunAs } from './runner.js';

/** Key names in the mounted Secrets (operator/naming.ts TlsKeys). */
const keys = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt', clientCa: 'client-ca.crt' } as const;

export interface ServerTlsSettings {
  /** The server Secret's folder: tls.crt, tls.key, ca.crt (server CA), client-ca.crt (client CA). */
  serverDir: string;
  /** The replication client Secret's folder: tls.crt, tls.key, ca.crt. */
  replicationDir?: string;
  /** A standby cluster's copy of its source's replication client Secret (tls.crt, tls.key, ca.crt), when there is one (an optional volume). */
  sourceDir?: string;
  /** Where the private copies go. */
  targetDir: string;
  runAs?: RunAs;
}

/** The copies PostgreSQL and libpq read. */
export interface ServerTlsFiles {
  cert: string;
  key: string;
  /** What the server verifies client certificates with (ssl_ca_file). */
  clientCa: string;
  /** What this member verifies other members with (sslrootcert). */
  serverCa: string;
  replicationCert?: string;
  replicationKey?: string;
  /** The source's CA and its replication client certificate (a standby cluster of a DatabaseCluster). */
  sourceCa?: string;
  sourceCert?: string;
  sourceKey?: string;
}

type Material = Record<string, string>;

function readMaterial(settings: ServerTlsSettings): Material | string {
  const material: Material = {};
  const read = (dir: string, key: string, as: string): string | undefined => {
    try {
      material[as] = readFileSync(join(dir, key), 'utf8');
      return undefined;
    } catch {
      return `${join(dir, key)} cannot be read`;
    }
  };
  const missing = [
    read(settings.serverDir, keys.cert, 'cert'),
    read(settings.serverDir, keys.key, 'key'),
    read(settings.serverDir, keys.ca, 'serverCa'),
    read(settings.serverDir, keys.clientCa, 'clientCa'),
    ...(settings.replicationDir
      ? [read(settings.replicationDir, keys.cert, 'replicationCert'), read(settings.replicationDir, keys.key, 'replicationKey')]
      : []),
  ].find((problem) => problem !== undefined);
  if (missing) return missing;
  // The source's files are there only in a standby cluster of a DatabaseCluster: all three or none.
  if (settings.sourceDir) {
    const source = [
      read(settings.sourceDir, keys.cert, 'sourceCert'),
      read(settings.sourceDir, keys.key, 'sourceKey'),
      read(settings.sourceDir, keys.ca, 'sourceCa'),
    ];
    if (source.some((problem) => problem !== undefined)) for (const as of ['sourceCert', 'sourceKey', 'sourceCa']) delete material[as];
  }
  return material;
}

/** Why the pair cannot serve, or undefined. */
function pairProblem(cert: string | undefined, key: string | undefined, what: string): string | undefined {
  if (!cert || !key) return undefined;
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key)) ? undefined : `the ${what} key does not match its certificate`;
  } catch (error) {
    return `the ${what} certificate or key cannot be read (${(error as Error).message.slice(0, 100)})`;
  }
}

export class ServerTls {
  private digest: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: ServerTlsSettings,
    private readonly logger: Logger,
  ) {}

  get files(): ServerTlsFiles {
    const dir = this.settings.targetDir;
    return {
      cert: join(dir, 'server.crt'),
      key: join(dir, 'server.key'),
      clientCa: join(dir, 'client-ca.crt'),
      serverCa: join(dir, 'server-ca.crt'),
      ...(this.settings.replicationDir ? { replicationCert: join(dir, 'replication.crt'), replicationKey: join(dir, 'replication.key') } : {}),
      ...(this.settings.sourceDir ? { sourceCa: join(dir, 'source-ca.crt'), sourceCert: join(dir, 'source.crt'), sourceKey: join(dir, 'source.key') } : {}),
    };
  }

  /** How this member reaches the others (peer-tls.ts): their certificates checked against the server CA, its own replication certificate presented. */
  peerTls(hostSuffix: string): PeerTlsSettings {
    const files = this.files;
    return {
      rootCert: files.serverCa,
      hostSuffix,
      ...(files.replicationCert && files.replicationKey ? { cert: files.replicationCert, key: files.replicationKey } : {}),
      ...(files.sourceCa && files.sourceCert && files.sourceKey ? { source: { rootCert: files.sourceCa, cert: files.sourceCert, key: files.sourceKey } } : {}),
    };
  }

  /** The installed certificates, as GET /metrics reports their remaining lifetime. */
  certificateFiles(): { certificate: string; path: string }[] {
    const files = this.files;
    return [
      { certificate: 'server', path: files.cert },
      { certificate: 'server-ca', path: files.serverCa },
      { certificate: 'client-ca', path: files.clientCa },
      ...(files.replicationCert ? [{ certificate: 'replication', path: files.replicationCert }] : []),
    ];
  }

  /** The server settings that turn TLS on with the copies. */
  parameters(): Record<string, ParameterValue> {
    const files = this.files;
    return { ssl: true, ssl_cert_file: files.cert, ssl_key_file: files.key, ssl_ca_file: files.clientCa, ssl_min_protocol_version: 'TLSv1.2' };
  }

  /**
   * Copies the mounted material when it changed and holds together: 'installed', 'unchanged', or
   * why it was not copied.
   */
  install(): 'installed' | 'unchanged' | string {
    const material = readMaterial(this.settings);
    if (typeof material === 'string') return material;
    const problem = pairProblem(material.cert, material.key, 'server') ?? pairProblem(material.replicationCert, material.replicationKey, 'replication');
    if (problem) return problem;
    // A source copy that does not hold together never holds the server back: it is left out (the files in use stay).
    if (pairProblem(material.sourceCert, material.sourceKey, 'source replication'))
      for (const as of ['sourceCert', 'sourceKey', 'sourceCa']) delete material[as];
    const digest = createHash('sha256').update(JSON.stringify(material)).digest('hex');
    if (digest === this.digest) return 'unchanged';
    mkdirSync(this.settings.targetDir, { recursive: true, mode: 0o700 });
    if (this.settings.runAs) chownSync(this.settings.targetDir, this.settings.runAs.uid, this.settings.runAs.gid);
    const files = this.files;
    const targets: [string, string | undefined][] = [
      [files.cert, material.cert],
      [files.key, material.key],
      [files.clientCa, material.clientCa],
      [files.serverCa, material.serverCa],
      [files.replicationCert ?? '', material.replicationCert],
      [files.replicationKey ?? '', material.replicationKey],
      [files.sourceCa ?? '', material.sourceCa],
      [files.sourceCert ?? '', material.sourceCert],
      [files.sourceKey ?? '', material.sourceKey],
    ];
    // Each file replaced whole (a reload in between reads either the old or the new one).
    for (const [path, content] of targets) {
      if (!path || content === undefined) continue;
      writePrivateFile(`${path}.new`, content, this.settings.runAs);
      renameSync(`${path}.new`, path);
    }
    this.digest = digest;
    return 'installed';
  }

  /** Checks the mounted files every `intervalMs`; after new copies, `reload` (PostgreSQL's SIGHUP). */
  follow(reload: () => Promise<void>, intervalMs = 10_000): void {
    this.timer = setInterval(() => {
      const outcome = this.install();
      if (outcome === 'unchanged') return;
      if (outcome !== 'installed') {
        this.logger.warn({ problem: outcome }, 'mounted TLS files not taken up yet; the ones in use stay');
        return;
      }
      this.logger.info('new TLS files installed; reloading PostgreSQL');
      reload().catch((error: Error) => {
        this.digest = undefined; // the next check installs and reloads again
        this.logger.warn({ err: error.message }, 'reload after new TLS files failed');
      });
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/**
 * Installs the mounted files before PostgreSQL first starts (with ssl on it cannot start without
 * them), waiting while they are missing or do not hold together: a pod waits, it never crash-loops.
 */
export async function startServerTls(settings: ServerTlsSettings, logger: Logger, retryMs = 2_000): Promise<ServerTls> {
  const tls = new ServerTls(settings, logger);
  for (let attempt = 0; ; attempt += 1) {
    const outcome = tls.install();
    if (outcome === 'installed' || outcome === 'unchanged') return tls;
    if (attempt % 15 === 0) logger.warn({ problem: outcome }, 'waiting for usable TLS files before PostgreSQL starts');
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}
