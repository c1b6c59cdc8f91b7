import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.js';
import type { ApiCredentials } from '../../api/ha-node/credentials.js';
import { AdminConsole } from './admin-console.js';
import { createControlServer, type PoolerControl } from './control-api.js';
import { ReachCache } from './reach.js';
import type { PoolMode } from '../../api/pooler/pgbouncer-parameters.js';
import { installPoolerTls, poolerTlsFiles, poolerTlsSettings } from './tls-files.js';
import { authFileLine, renderPgbouncerIni, type PgbouncerIniSettings, type PgbouncerTarget } from './ini.js';

/**
 * `keelson pooler`: renders pgbouncer.ini, runs PgBouncer as a child and serves the control API.
 * A retarget to a new address rewrites the ini and RELOADs (to the same address, nothing); a
 * pause is bounded and expires on its own (holdMs), so a controller that dies mid-switchover
 * cannot leave clients waiting forever.
 */
export interface PoolerSettings {
  listenAddr: string;
  listenPort: number;
  control: { host: string; port: number };
  runDir: string;
  target: PgbouncerTarget;
  authUser: string;
  authPasswordFile: string;
  poolMode: PoolMode;
  maxClientConnections: number;
  defaultPoolSize: number;
  parameters: Record<string, string>;
  pgbouncerBin: string;
  /** Unprivileged user PgBouncer runs as when this process is root (PgBouncer refuses root). */
  runAs?: { uid: number; gid: number };
  /** The mounted server TLS Secret's folder: TLS to clients and to PostgreSQL (tls-files.ts). */
  tlsDir?: string;
}

export interface RunningPooler {
  controlUrl: string;
  control: PoolerControl;
  admin: AdminConsole;
  close(): Promise<void>;
}

const adminUser = 'keelson_admin';
/** How often the mounted TLS files are compared with the installed ones. */
const tlsCheckMs = 10_000;

async function waitForConsole(admin: AdminConsole, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with code ${child.exitCode}`);
    try {
      await admin.command('SHOW VERSION');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`pgbouncer admin console did not answer: ${(error as Error).message}`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function startPooler(settings: PoolerSettings, credentials: ApiCredentials | undefined, logger: Logger): Promise<RunningPooler> {
  mkdirSync(settings.runDir, { recursive: true });
  const iniPath = join(settings.runDir, 'pgbouncer.ini');
  const authFile = join(settings.runDir, 'userlist.txt');
  const adminPassword = randomBytes(24).toString('base64url');
  const authPassword = readFileSync(settings.authPasswordFile, 'utf8').replace(/\r?\n$/, '');
  const owned = (path: string): void => {
    if (settings.runAs) chownSync(path, settings.runAs.uid, settings.runAs.gid);
  };
  writeFileSync(authFile, `${authFileLine(settings.authUser, authPassword)}\n${authFileLine(adminUser, adminPassword)}\n`, { mode: 0o600 });
  owned(authFile);
  owned(settings.runDir);
  let tlsDigest: string | undefined;
  if (settings.tlsDir) {
    const installed = installPoolerTls(settings.tlsDir, settings.runDir, settings.runAs);
    if ('problem' in installed) throw new Error(`cannot start PgBouncer with TLS: ${installed.problem}`);
    tlsDigest = installed.digest;
  }
  const iniSettings: PgbouncerIniSettings = {
    listenAddr: settings.listenAddr,
    listenPort: settings.listenPort,
    runDir: settings.runDir,
    authFile,
    authUser: settings.authUser,
    adminUser,
    poolMode: settings.poolMode,
    maxClientConnections: settings.maxClientConnections,
    defaultPoolSize: settings.defaultPoolSize,
    parameters: settings.parameters,
    ...(settings.tlsDir ? { tls: poolerTlsSettings(poolerTlsFiles(settings.runDir)) } : {}),
  };
  let target = settings.target;
  const writeIni = (): void => {
    writeFileSync(iniPath, renderPgbouncerIni(iniSettings, target), { mode: 0o600 });
    owned(iniPath);
  };
  writeIni();

  const child = spawn(settings.pgbouncerBin, [iniPath], { stdio: ['ignore', 'pipe', 'pipe'], uid: settings.runAs?.uid, gid: settings.runAs?.gid });
  const pgbouncerLog = logger.child({ component: 'pgbouncer' });
  const forward = (chunk: Buffer): void => {
    for (const text of chunk.toString('utf8').split('\n')) if (text.trim()) pgbouncerLog.info(text.trim());
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  const admin = new AdminConsole({ socketDir: settings.runDir, port: settings.listenPort, user: adminUser, password: adminPassword });
  try {
    await waitForConsole(admin, child, 10_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }

  let holdTimer: NodeJS.Timeout | undefined;
  // Only this process knows the admin password, so only it pauses: its own record is the state (PgBouncer 1.18 has no SHOW STATE).
  let paused = false;
  let pauseId = 0;
  const reach = new ReachCache();
  const resume = async (): Promise<void> => {
    clearTimeout(holdTimer);
    await admin.resume();
    paused = false;
  };
  const control: PoolerControl = {
    state() {
      return Promise.resolve({ paused, target });
    },
    reachable: () => reach.check(target.host, target.port),
    pauses: () => pauseId,
    async pause(timeoutMs, holdMs) {
      const result = await admin.pause(timeoutMs);
      if (!result.ok) return result;
      paused = true;
      pauseId += 1;
      clearTimeout(holdTimer);
      holdTimer = setTimeout(() => {
        logger.warn({ holdMs }, 'a pause outlived its hold time; resuming');
        resume().catch((error: Error) => logger.error({ err: error.message }, 'could not resume after the hold time'));
      }, holdMs);
      holdTimer.unref();
      logger.info({ waitedMs: result.waitedMs, pauseId }, 'paused');
      return { ...result, pauseId };
    },
    async resume(id) {
      if (id !== undefined && paused && id !== pauseId) return { ok: false, reason: `pause ${id} was superseded by pause ${pauseId}; still paused` };
      await resume();
      logger.info({ pauseId: id }, 'resumed');
      return { ok: true };
    },
    async retarget(host, port) {
      // Two members may both send the new primary's address (the old primary's hand-over, the new
      // primary's alignment): the second must not RELOAD, or it cuts the first logins to it.
      if (host === target.host && port === target.port) return;
      target = { host, port };
      writeIni();
      await admin.reload();
      logger.info({ host, port, paused }, 'pointed at a new primary');
    },
  };

  const server = createControlServer(control, credentials);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.control.port, settings.control.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // New mounted TLS files (a renewal): copied, then PgBouncer re-reads them on RELOAD.
  const tlsTimer = settings.tlsDir
    ? setInterval(() => {
        const installed = installPoolerTls(settings.tlsDir!, settings.runDir, settings.runAs, tlsDigest);
        if ('problem' in installed) return logger.warn({ problem: installed.problem }, 'mounted TLS files not taken up yet');
        if (installed.digest === tlsDigest) return;
        tlsDigest = installed.digest;
        admin.command('RELOAD').then(
          () => logger.info('new TLS files installed; PgBouncer reloaded'),
          (error: Error) => {
            tlsDigest = undefined; // the next check copies and reloads again
            logger.warn({ err: error.message }, 'RELOAD after new TLS files failed');
          },
        );
      }, tlsCheckMs)
    : undefined;
  tlsTimer?.unref();
  return {
    controlUrl: `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
    control,
    admin,
    async close() {
      clearTimeout(holdTimer);
      clearInterval(tlsTimer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await admin.close();
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
