import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Server as TlsServer } from 'node:tls';
import { dirname, join } from 'node:path';
import { packageVersion } from '../../lib/cli/version.js';
import { serve, type RunningServer } from '../../lib/http.js';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger, type Logger } from '../../lib/log.js';
import { createHaNodeApp } from './api/app.js';
import type { ApiModule } from './api/context.js';
import type { HaNodeSettings } from './config.js';
import { LeaseDcs } from './dcs/lease-dcs.js';
import { authorizationHeader, loadApiCredentials, type ApiCredentials } from '../../api/ha-node/credentials.js';
import { writeFenceDeadline } from './fence/deadline.js';
import { HaLoop } from './ha/loop.js';
import { defaultConfig, type EffectiveConfig } from './ha/settings.js';
import { PodLabeler } from './pod-labeler.js';
import { AppOwnerKeeper } from './postgres/app-owner.js';
import { PostgresInstance } from './postgres/instance.js';
import { resolveRunAs } from './postgres/runner.js';
import { PoolerRoleKeeper } from './postgres/pooler-role.js';
import { ManagedKeeper } from './managed/keeper.js';
import { KubeManagedReads } from './managed/kube-reads.js';
import { PoolerFleet } from './pooler/fleet.js';
import { ClusterPods } from './takeover/leader-pods.js';
import { LeaderCrashJudge } from './takeover/judge.js';
import { ContainerNames, Labels, PodComponents } from '../../api/naming.js';
import { PgBackRest } from './backup/engine.js';
import { BackupKeeper } from './backup/keeper.js';
import { PgBackRestServer } from './backup/tls-server.js';
import { MemberTlsRenewal } from './backup/tls-renewal.js';
import { startServerTls } from './postgres/server-tls.js';
import { LiveWal } from './api/live-wal.js';
import { cachedServerAlive } from './api/server-alive.js';
import { ApiTls } from './api/api-tls.js';
import { StartingHandler } from './api/starting.js';
import type { PeerApiTls } from './ha/peer-api.js';

export interface RunningHaNode {
  url: string;
  loop: HaLoop;
  pg: PostgresInstance;
  /** Clean stop: a leader stops PostgreSQL, then releases the lease. */
  close(): Promise<void>;
}

export interface RunOptions {
  logger?: Logger;
  /** Extra API modules (the operations API). */
  apiModules?: ApiModule[];
  /** Credentials of the authenticated endpoints; default: KEELSON_API_* from the environment; null: none. */
  credentials?: ApiCredentials | null;
  /** Command that starts the fencing process; default: this same CLI with `ha-node fence`. */
  fencerCommand?: string[];
}

function baseConfigFrom(settings: HaNodeSettings): EffectiveConfig {
  return {
    ...defaultConfig,
    ttl: settings.ttl,
    loop_wait: settings.loopWait,
    retry_timeout: settings.retryTimeout,
    maximum_lag_on_failover: settings.maximumLagOnFailover,
    primary_start_timeout: settings.primaryStartTimeout,
    primary_hang_timeout: settings.primaryHangTimeout,
    check_timeline: settings.checkTimeline,
    failsafe_mode: settings.failsafeMode,
    synchronous_mode: settings.synchronousMode,
    use_rewind: settings.useRewind,
    use_slots: settings.useSlots,
    parameters: {},
  };
}

function startFencer(settings: HaNodeSettings, deadlineFile: string, command: string[] | undefined, logger: Logger): ChildProcess {
  const base = command ?? [process.execPath, ...process.execArgv, process.argv[1] ?? 'keelson'];
  const [file, ...args] = base;
  const child = spawn(
    file!,
    [...args, 'ha-node', 'fence', '--deadline-file', deadlineFile, '--pgdata', settings.dataDir, '--parent-pid', String(process.pid)],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, POD_NAME: settings.name },
    },
  );
  child.on('exit', (code, signal) => logger.info({ code, signal }, 'fencing process exited'));
  child.unref();
  return child;
}

/**
 * pgBackRest for this member: archive settings every start writes, the configuration files (a
 * missing credentials file is reported by GET /backup, never fatal: WAL then stays until it can be
 * archived), and the keeper that creates the stanza on the primary.
 */
function startBackupKeeper(settings: HaNodeSettings, pg: PostgresInstance, logger: Logger): BackupKeeper {
  const engine = new PgBackRest({
    config: settings.backup!,
    server: { dataDir: settings.dataDir, port: settings.pgPort, socketDir: settings.socketDir, user: settings.superuser.username },
    bin: settings.pgbackrestBin,
    runAs: pg.settings.runAs,
    activity: pg.activity,
    podIp: settings.podIp,
  });
  pg.configure({ enforced: engine.archiveParameters() });
  const keeper = new BackupKeeper(engine, logger.child({ component: 'backup' }));
  try {
    // The source's configuration (source.conf) is the standby duty's: written while the dynamic
    // configuration names a source, removed once the cluster is promoted (never at start).
    engine.writeConfig();
  } catch (error) {
    logger.error({ err: (error as Error).message }, 'cannot write the pgBackRest configuration; WAL is kept until it can be archived');
  }
  return keeper;
}

/**
 * pgBackRest's TLS server when backups may run on a standby: this member's certificates, issued
 * from the cluster CA for its pod IP, then the server. A failure is logged and leaves backups on
 * the primary working; a standby backup reaching this member then fails with pgBackRest's reason.
 */
async function startPgBackRestServer(
  settings: HaNodeSettings,
  keeper: BackupKeeper,
  pg: PostgresInstance,
  logger: Logger,
): Promise<{ server: PgBackRestServer; renewal: MemberTlsRenewal } | undefined> {
  const tlsServer = settings.backup?.tlsServer;
  if (!tlsServer) return undefined;
  const log = logger.child({ component: 'backup-tls' });
  const renewal = new MemberTlsRenewal(tlsServer, settings.podIp, keeper.engine.tlsFiles, pg.settings.runAs, log);
  try {
    renewal.renewIfDue();
    keeper.engine.writeConfig();
  } catch (error) {
    log.error({ err: (error as Error).message }, 'cannot issue the pgBackRest TLS certificates; backups on a standby will fail');
    return undefined;
  }
  const server = new PgBackRestServer(keeper.engine.bin, keeper.engine.paths.conf, pg.settings.runAs, log);
  server.start();
  // The operator rotates the CA before it expires: follow the mounted Secret.
  renewal.follow(server, tlsServer.checkSeconds * 1000);
  return { server, renewal };
}

/**
 * How this member verifies the others' APIs: the server Secret's CA and their names under the
 * headless Service; its own API certificate presented when peers verify clients.
 */
function peerTlsOf(settings: HaNodeSettings, apiTls: ApiTls | undefined): PeerApiTls | undefined {
  const clientCertificate = apiTls && settings.apiTls?.verifyClient !== 'none' ? { clientCertificate: () => apiTls.current() } : {};
  const server = settings.serverTls;
  if (!server) return apiTls ? clientCertificate : undefined;
  return { caFile: join(server.serverDir, 'ca.crt'), ...(server.peerHostSuffix ? { hostSuffix: server.peerHostSuffix } : {}), ...clientCertificate };
}

/**
 * Starts one member: API server, DCS watch, fencing process and the HA loop. The API listens
 * first (StartingHandler) so that a member waiting for its certificates answers liveness.
 */
export async function runHaNode(settings: HaNodeSettings, options: RunOptions = {}): Promise<RunningHaNode> {
  const logger = options.logger ?? createLogger({ name: 'ha-node' }).child({ member: settings.name, scope: settings.scope });
  const apiTls = settings.apiTls ? new ApiTls(settings.apiTls, logger.child({ component: 'api-tls' })) : undefined;
  const starting = new StartingHandler();
  const server: RunningServer = await serve(starting.handler, {
    host: settings.api.host,
    port: settings.api.port,
    logger,
    shutdownTimeoutMs: 2000,
    ...(apiTls ? { tls: apiTls.serverOptions() } : {}),
  });
  apiTls?.follow(server.server as unknown as TlsServer);
  try {
    return await startMember(settings, options, logger, { server, starting, apiTls });
  } catch (error) {
    apiTls?.stop();
    await server.close();
    throw error;
  }
}

interface Listener {
  server: RunningServer;
  starting: StartingHandler;
  apiTls: ApiTls | undefined;
}

async function startMember(settings: HaNodeSettings, options: RunOptions, logger: Logger, { server, starting, apiTls }: Listener): Promise<RunningHaNode> {
  const kubeConfig = loadKubeConfig({ kubeconfig: settings.kubeconfig });
  const runAs = await resolveRunAs(settings.runAs);
  const baseConfig = baseConfigFrom(settings);
  const version = packageVersion();
  // One read of the API credentials: this member's endpoints check them, and it sends them to its peers.
  const credentials = options.credentials === undefined ? (loadApiCredentials() ?? null) : options.credentials;
  const serverTls = settings.serverTls
    ? await startServerTls(
        { ...settings.serverTls, targetDir: join(settings.socketDir, 'tls'), ...(runAs ? { runAs } : {}) },
        logger.child({ component: 'server-tls' }),
      )
    : undefined;
  // The files PostgreSQL waited for are there: the API takes them now rather than at its next check.
  apiTls?.refresh();
  const peerTls = peerTlsOf(settings, apiTls);

  const pg = new PostgresInstance(
    {
      name: settings.name,
      scope: settings.scope,
      dataDir: settings.dataDir,
      binDir: settings.pgBin,
      listenAddress: settings.pgListen,
      connectHost: settings.podIp,
      port: settings.pgPort,
      socketDir: settings.socketDir,
      ...(settings.walDir ? { walDir: settings.walDir } : {}),
      superuser: settings.superuser,
      replication: settings.replication,
      runAs,
      parameters: { ...settings.pgParameters, ...serverTls?.parameters() },
      ...(serverTls && settings.serverTls?.peerHostSuffix ? { peerTls: serverTls.peerTls(settings.serverTls.peerHostSuffix) } : {}),
    },
    logger.child({ component: 'postgres' }),
  );
  pg.prepareDirectories();
  serverTls?.follow(() => pg.reload());
  const backup = settings.backup ? startBackupKeeper(settings, pg, logger) : undefined;
  // What standby_cluster.repository stands for on this member: each segment fetched when asked
  // (the asynchronous queue would wait for segments the source has not written yet).
  if (backup && settings.backup?.recovery?.standby) baseConfig.standby_archive_command = backup.engine.restoreCommand({ source: true, prefetch: false });
  const pgbackrestServer = backup ? await startPgBackRestServer(settings, backup, pg, logger) : undefined;

  const ref: { loop?: HaLoop } = {};
  const currentConfig = (): EffectiveConfig => ref.loop?.effective() ?? baseConfig;
  const dcs = new LeaseDcs({
    kubeConfig,
    namespace: settings.namespace,
    scope: settings.scope,
    name: settings.name,
    ttl: () => currentConfig().ttl,
    requestTimeoutMs: () => Math.max(1000, Math.min(5000, (currentConfig().retry_timeout * 1000) / 2)),
    logger: logger.child({ component: 'dcs' }),
  });
  // What the kubelet reports about the cluster's pods: one of the sources of early takeover (ADR 0404).
  const pods = new ClusterPods(kubeConfig, settings.namespace, settings.scope, logger.child({ component: 'pods' }));
  const fleet = new PoolerFleet({
    entries: settings.poolers,
    pods: settings.poolerPods ? { addresses: () => pods.addressesOf(PodComponents.pooler), controlPort: settings.poolerPods } : undefined,
    authorization: authorizationHeader(credentials ?? undefined),
    logger: logger.child({ component: 'poolers' }),
  });
  // The read-only poolers: found the same way, never paused, pointed at replicas by the primary.
  const readOnlyFleet = settings.poolerReadOnlyPods
    ? new PoolerFleet({
        entries: [],
        pods: { addresses: () => pods.addressesOf(PodComponents.poolerReadOnly), controlPort: settings.poolerReadOnlyPods },
        authorization: authorizationHeader(credentials ?? undefined),
        logger: logger.child({ component: 'read-only-poolers' }),
      })
    : undefined;
  const labeler = new PodLabeler(kubeConfig, settings.namespace, settings.name, logger, () => 2000, pods);

  const fenceFile = join(dirname(settings.dataDir), 'fence-deadline');
  mkdirSync(dirname(fenceFile), { recursive: true });
  writeFenceDeadline(fenceFile, 0);
  const fencer = settings.fencing ? startFencer(settings, fenceFile, options.fencerCommand, logger) : undefined;

  // spec.roles and the Database objects, kept by whichever member leads; its Secret poll wakes the loop.
  const managed = new ManagedKeeper({
    reads: new KubeManagedReads(kubeConfig, settings.namespace, settings.scope, {
      onChange: () => ref.loop?.wake('database-changed'),
      logger: logger.child({ component: 'databases' }),
    }),
    logger: logger.child({ component: 'managed' }),
    wake: (reason) => ref.loop?.wake(reason),
  });
  const apiHost = settings.podIp;
  const apiUrl = `${apiTls ? 'https' : 'http'}://${apiHost.includes(':') ? `[${apiHost}]` : apiHost}:${settings.api.port}/ha`;
  const haLoop = new HaLoop(
    {
      name: settings.name,
      scope: settings.scope,
      version,
      apiUrl,
      apiAuthorization: authorizationHeader(credentials ?? undefined),
      ...(peerTls ? { peerTls } : {}),
      tags: settings.tags,
      baseConfig,
      bootstrapConfig: settings.bootstrapConfig,
      fenceFile: settings.fencing ? fenceFile : undefined,
      setRoleLabel: (role) => labeler.set(role),
      clearOtherPrimaryLabels: () => labeler.clearOtherPrimaries(),
      crashJudge: new LeaderCrashJudge(pods, ContainerNames.postgres),
      backup,
      appOwner: new AppOwnerKeeper(settings.app, logger.child({ component: 'app-owner' })),
      poolerRole: settings.poolerPasswordFile ? new PoolerRoleKeeper(settings.poolerPasswordFile, logger.child({ component: 'pooler-role' })) : undefined,
      managed,
      poolers: fleet,
      readOnlyPoolers: readOnlyFleet,
      poolerPauseTimeoutMs: settings.poolerPauseTimeoutMs,
      logger: logger.child({ component: 'ha' }),
    },
    dcs,
    pg,
  );
  ref.loop = haLoop;
  const app = createHaNodeApp(
    {
      snapshot: () => haLoop.snapshot(),
      dcs,
      logger,
      wake: (reason) => haLoop.wake(reason),
      loop: haLoop,
      pg,
      liveWal: new LiveWal(() => pg.status()),
      serverAlive: cachedServerAlive(() => pg.postmasterPid()),
      backup,
      poolers: fleet,
      readOnlyPoolers: readOnlyFleet,
      managed,
      credentials,
      ...(serverTls ? { certificates: serverTls.certificateFiles(), requireTls: true } : {}),
      ...(peerTls ? { peerTls } : {}),
      ...(settings.apiTls ? { verifyClient: settings.apiTls.verifyClient } : {}),
    },
    options.apiModules ?? [],
  );
  // Until the loop knows it holds the lock, this pod is no primary: a label left over from before a
  // crash or restart would otherwise route -rw clients here once the restarted member turns ready.
  await labeler.set('replica');
  starting.use(app);
  await dcs.start();
  pods.onChange((name) => {
    haLoop.podChanged(name);
    // A pooler pod that came, got its address or turned ready: the leader points it at the primary
    // in a cycle now, not up to loop_wait later (a new pooler starts pointed at the -rw Service).
    const component = pods.pod(name)?.metadata?.labels?.[Labels.component];
    const isPooler = (component === PodComponents.pooler && settings.poolerPods) || (component === PodComponents.poolerReadOnly && settings.poolerReadOnlyPods);
    if (isPooler && haLoop.snapshot().cluster?.leader?.holder === settings.name) haLoop.wake('pooler-pod-changed');
  });
  pods.start();
  haLoop.start();
  managed.start();

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    loop: haLoop,
    pg,
    close: () =>
      (closing ??= (async () => {
        managed.stop();
        await haLoop.shutdown();
        pods.stop();
        await server.close();
        apiTls?.stop();
        pgbackrestServer?.renewal.stop();
        serverTls?.stop();
        await pgbackrestServer?.server.stop();
        if (fencer && fencer.exitCode === null) fencer.kill('SIGTERM');
      })()),
  };
}
