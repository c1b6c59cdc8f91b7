import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { join, resolve } from 'node:path';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { HaNodePaths, Ports } from '../../lib/ports.js';
import { group, plural, version } from '../../api/crd/types.js';
import type { BackupObject } from '../../api/crd/backup-kind.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { names, podSelector, selectorString, TlsKeys } from '../../api/naming.js';
import type { NetworkMode } from '../node/netns/node-mode.js';
import { nodeSubnet } from '../node/netns/subnet.js';
import { saveAndUnmountClaims } from '../node/claim-filesystems.js';
import { PodDiagnostics, readTail, type LogReader } from './pod-diagnostics.js';
import { waitPooler } from './pooler-wait.js';
import { startLocalStack, type LocalStack } from './stack.js';
import {
  forwarderPidFile,
  forwardPortsFromEnv,
  hostKubeconfigPath,
  nodeNamespaceKubeconfigPath,
  serveApiForward,
  serveServiceForwards,
  type ForwardPorts,
} from './up-namespace.js';

/**
 * `keelson local up|down`: the whole demo on one machine. `up` runs the stack in this process
 * (or, with --detach, in a child it waits for), creates the DatabaseCluster `demo`, shows progress
 * until it is Ready and prints how to connect; `down` stops the process recorded in DIR/pid.
 */
export interface UpOptions {
  dir: string;
  instances: number;
  detach: boolean;
  /** Where progress goes (stdout). */
  out: (line: string) => void;
  operatorVersion: string;
  readyTimeoutMs?: number;
  /** /24 for pod and Service addresses (default 127.0.0). */
  ipPrefix?: string;
  /** Serve the stand-in's fault injection hook (docs/local-kubernetes.md). */
  faultInjection?: boolean;
  /** `namespace`: this process runs inside an isolated namespace, reached from the host through forwarders. */
  network?: NetworkMode;
}

const clusterName = 'demo';
const namespace = 'default';

function pidFile(dir: string): string {
  return join(dir, 'pid');
}

export function runningPid(dir: string, file = pidFile(dir)): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // Missing, or removed just now by the process exiting (the forwarders' pid file in `local down`).
    return undefined;
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

interface ClusterView {
  phase?: string;
  readyInstances?: number;
  currentPrimary?: string;
  members?: Array<{ name: string; role: string; ready: boolean }>;
}

async function connectionInfo(api: OperatorKubeApi, dir: string, server: string, faultInjection: boolean, forward?: ForwardPorts): Promise<string[]> {
  const kubeconfig = forward ? hostKubeconfigPath(dir) : join(dir, 'kubeconfig');
  const clusterIP = async (name: string) => (await api.core.readNamespacedService({ namespace, name })).spec?.clusterIP ?? '?';
  // Through forwarders, the host reaches the Services at 127.0.0.1 on ports of their own.
  const forwarded: Record<string, number | undefined> = {
    [`${clusterName}-rw`]: forward?.rw,
    [`${clusterName}-ro`]: forward?.ro,
    [`${clusterName}-pooler-rw`]: forward?.pooler,
  };
  // verify-full against the cluster CA: the Service's name is checked, its address connected to (no DNS needed).
  const caFile = join(dir, 'ca.crt');
  const serverTls = await api.core.readNamespacedSecret({ namespace, name: names(clusterName).serverTlsSecret });
  writeFileSync(caFile, Buffer.from(serverTls.data?.[TlsKeys.ca] ?? '', 'base64'));
  const verified = async (name: string) =>
    `host=${name}.${namespace}.svc hostaddr=${forward ? '127.0.0.1' : await clusterIP(name)} port=${forward ? forwarded[name] : Ports.postgres} sslmode=verify-full sslrootcert=${caFile}`;
  const pods = (await api.core.listNamespacedPod({ namespace, labelSelector: selectorString(podSelector(clusterName)) })).items;
  const secretOf = (which: string) => `$(kubectl --kubeconfig ${kubeconfig} get secret ${clusterName}-${which} -o jsonpath='{.data.password}' | base64 -d)`;
  const password = secretOf('superuser');
  const lines = [
    '',
    `DatabaseCluster "${clusterName}" is Ready.`,
    `  kubeconfig:  export KUBECONFIG=${kubeconfig}   (kubectl get dbc,pods,svc)`,
    `  read-write:  PGPASSWORD=${password} psql "${await verified(`${clusterName}-rw`)} user=postgres"`,
    `  read-only:   PGPASSWORD=${password} psql "${await verified(`${clusterName}-ro`)} user=postgres"`,
    // Through PgBouncer, paused around switchovers: application roles only (never the superuser).
    `  pooled:      PGPASSWORD=${secretOf('app')} psql "${await verified(`${clusterName}-pooler-rw`)} user=${demoApp.owner} dbname=${demoApp.database}"`,
  ];
  for (const pod of pods.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1))) {
    const ip = pod.status?.podIP ?? '?';
    const role = pod.metadata?.labels?.['keelson.io/role'] ?? 'starting';
    // ha-node serves HTTPS with the server certificate, which names the pod under the headless Service: curl checks that name against the CA.
    const haHost = `${pod.metadata?.name}.${names(clusterName).headlessService}.${namespace}.svc:${Ports.haNodeApi}`;
    lines.push(
      `  ${pod.metadata?.name} (${role}): ha-node https://${haHost}${HaNodePaths.cluster} (curl --cacert ${caFile} --resolve ${haHost}:${ip})  exporter http://${ip}:${Ports.exporter}/metrics${forward ? '  (inside the node namespace only)' : ''}`,
    );
  }
  // Pod addresses exist only inside the node namespace: enter it (this process's) to reach them.
  if (forward)
    lines.push(
      `  pod URLs:    nsenter --net=/proc/$(cat ${pidFile(dir)})/ns/net curl <url>   (as root; pod addresses are reachable only inside the node namespace)`,
    );
  // ctl finds the members through the Leases; in namespace mode the kubeconfig names the 127.0.0.1 member proxy it tunnels through.
  lines.push(`  keelson ctl: keelson ctl --kubeconfig ${kubeconfig} -c ${clusterName} list   (switchover, restart, ...)`);
  if (faultInjection)
    lines.push(
      `  faults:      POST ${server}/_keelson/faults/{refuse,lift,pause,resume} with the admin certificate ${join(dir, 'apiserver', 'admin.crt')} (see docs/local-kubernetes.md)`,
    );
  lines.push(`  stop:        keelson local down --dir ${dir}`);
  return lines;
}

async function ensureCluster(api: OperatorKubeApi, instances: number): Promise<void> {
  if (await api.readCluster(namespace, clusterName)) return;
  await api.custom.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural,
    body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name: clusterName }, spec: demoSpec(instances) },
  });
}

/** The demo's application database and its owner (the spec's defaults, named here for the printout). */
const demoApp = { database: 'app', owner: 'app' };

/**
 * The demo cluster: backups into a filesystem repository, so it has them with nothing else
 * installed, and one pooler (PgBouncer, paused around switchovers) in front of the primary.
 */
export function demoSpec(instances: number): Record<string, unknown> {
  return {
    instances,
    bootstrap: demoApp,
    pooler: { enabled: true, instances: 1 },
    backup: {
      repositories: [{ name: 'local', volume: { size: '2Gi' } }],
      schedules: { full: '0 3 * * *', incremental: '0 */6 * * *', immediate: true },
      retention: { fullCount: 2 },
    },
  };
}

/** How long `up` waits, once Ready, for the demo's first backup before it reports it as still running. */
const firstBackupWaitMs = 120_000;

/** How long `up` waits for the cluster to become Ready, from its start (the --timeout default). */
export const defaultReadyTimeoutMs = 180_000;

/** The demo's first backup (schedules.immediate) once it completed, as `kubectl get kbk` will show it. */
async function firstBackupLine(api: OperatorKubeApi, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last: BackupObject | undefined;
  while (Date.now() < deadline) {
    last = ((await api.listBackups(namespace).catch(() => [])) as unknown as BackupObject[]).find((b) => b.spec?.cluster === clusterName);
    const phase = last?.status?.phase;
    if (phase === 'Completed')
      return `  backups:     ${last!.metadata.name} Completed (${last!.status!.label}, ${last!.status!.sizeBytes ?? '?'} bytes) in the filesystem repository  (kubectl get kbk)`;
    if (phase === 'Failed') return `  backups:     ${last!.metadata.name} Failed: ${last!.status!.message ?? ''}  (kubectl get kbk)`;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return `  backups:     ${last ? `${last.metadata.name} ${last.status?.phase ?? 'Pending'}` : 'the first backup has not started yet'}  (kubectl get kbk)`;
}

/** Progress lines carry the seconds since `up` started, so a slow step shows where the time went. */
function stamped(out: (line: string) => void, startedAt: number): (line: string) => void {
  return (line) => out(line.startsWith('  ') ? `${line}  [${((Date.now() - startedAt) / 1000).toFixed(1)} s]` : line);
}

/** The container logs the node agent keeps (DIR/node/logs/<ns>_<pod>_<uid>/<container>.log). */
function nodeLogReader(dir: string): LogReader {
  return (pod, container) => {
    const meta = pod.metadata ?? {};
    return readTail(join(dir, 'node', 'logs', `${meta.namespace ?? namespace}_${meta.name}_${meta.uid}`, `${container}.log`));
  };
}

/** Not Ready by the deadline: the error carries the summary of every pod that is not Ready. */
export class NotReadyError extends Error {}

/**
 * Waits until the cluster is Healthy with every instance ready, printing each change of its status
 * and, for pods that restart or stay unready, the container and the last error line of its log.
 */
async function waitReady(api: OperatorKubeApi, dir: string, instances: number, out: (line: string) => void, deadline: number): Promise<void> {
  const diagnostics = new PodDiagnostics(nodeLogReader(dir));
  let last = '';
  let pods: V1Pod[] = [];
  while (Date.now() < deadline) {
    const status = ((await api.readCluster(namespace, clusterName).catch(() => undefined))?.status ?? {}) as ClusterView;
    const members = (status.members ?? []).map((m) => `${m.name}:${m.role}${m.ready ? '' : '(not ready)'}`).join(' ');
    const line = `  ${status.phase ?? 'Pending'}: ${status.readyInstances ?? 0}/${instances} ready${status.currentPrimary ? `, primary ${status.currentPrimary}` : ''}${members ? ` [${members}]` : ''}`;
    if (line !== last) out(line);
    last = line;
    if (status.phase === 'Healthy' && status.readyInstances === instances) return;
    pods = (await api.core.listNamespacedPod({ namespace }).catch(() => ({ items: pods }))).items;
    for (const problem of diagnostics.observe(pods, Date.now())) out(problem);
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const summary = diagnostics.summary(pods, Date.now());
  throw new NotReadyError(
    [
      `cluster ${clusterName} is not Ready by the deadline (${last.trim() || 'no status yet'}); logs are under ${join(dir, 'node', 'logs')}`,
      ...(summary.length > 0 ? ['pods not Ready:', ...summary] : []),
    ].join('\n'),
  );
}

/** Runs the stack in this process until SIGINT/SIGTERM. Resolves once it is Ready (the process keeps running). */
export async function runLocalUpForeground(options: UpOptions): Promise<LocalStack> {
  const dir = resolve(options.dir);
  const existing = runningPid(dir);
  if (existing && existing !== process.pid)
    throw new Error(`a local cluster is already running from ${dir} (pid ${existing}); run keelson local down --dir ${dir}`);
  // A fresh demo each time: the API server state lives in memory, so old volumes would not match it.
  rmSync(join(dir, 'node'), { recursive: true, force: true });
  rmSync(join(dir, 'ready'), { force: true });
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(pidFile(dir), `${process.pid}\n`);
  const startedAt = Date.now();
  const deadline = startedAt + (options.readyTimeoutMs ?? defaultReadyTimeoutMs);
  const out = stamped(options.out, startedAt);
  const logger = createLogger({
    name: 'local',
    level: process.env.LOG_LEVEL ?? 'info',
    destination: createWriteStream(join(dir, 'keelson.log'), { flags: 'a' }),
  });
  out(`starting the Kubernetes stand-in, local node and operator in ${dir}`);
  // Namespace mode: DIR/kubeconfig is the host's (through the forwarder); the stack's own names an address only reachable inside.
  const kubeconfigPath = options.network === 'namespace' ? nodeNamespaceKubeconfigPath(dir) : undefined;
  const stack = await startLocalStack({
    dir,
    logger,
    operatorVersion: options.operatorVersion,
    ipPrefix: options.ipPrefix,
    faultInjection: options.faultInjection,
    network: options.network,
    kubeconfigPath,
  });
  out(
    stack.node.agent.volumeMode === 'filesystem'
      ? 'volumes: each claim is a filesystem of its claimed size (tmpfs, grown online)'
      : 'volumes: folders without a size (run as root for volumes of the claimed size)',
  );
  const forward = options.network === 'namespace' ? forwardPortsFromEnv() : undefined;
  if (forward) await serveApiForward(dir, forward, stack.apiServer.url, stack.kubeconfigPath, nodeSubnet());
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping local cluster');
    void stack.close().finally(() => {
      rmSync(pidFile(dir), { force: true });
      rmSync(join(dir, 'ready'), { force: true });
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  const api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
  await ensureCluster(api, options.instances);
  out(`creating DatabaseCluster ${clusterName} with ${options.instances} instance(s)`);
  try {
    await waitReady(api, dir, options.instances, out, deadline);
    await waitPooler(api, { namespace, cluster: clusterName, ...demoApp }, out, Math.max(1_000, deadline - Date.now()));
  } catch (err) {
    // Not Ready: stop what was started, so nothing is left running behind the error.
    await stack.close().catch(() => undefined);
    rmSync(pidFile(dir), { force: true });
    throw err;
  }
  if (forward) {
    const ip = async (name: string) => (await api.core.readNamespacedService({ namespace, name })).spec?.clusterIP ?? '';
    await serveServiceForwards(
      dir,
      { rw: await ip(`${clusterName}-rw`), ro: await ip(`${clusterName}-ro`), pooler: await ip(`${clusterName}-pooler-rw`) },
      Ports.postgres,
    );
  }
  const server = forward ? `https://127.0.0.1:${forward.api}` : stack.apiServer.url;
  const info = await connectionInfo(api, dir, server, options.faultInjection ?? false, forward);
  info[1] = `${info[1]} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`;
  info.push('  backups:     the first backup runs now  (kubectl get kbk)');
  for (const line of info) options.out(line);
  writeFileSync(join(dir, 'ready'), `${info.join('\n')}\n`);
  // Told once it is known, without holding Ready back (the first backup runs right after bootstrap).
  void firstBackupLine(api, firstBackupWaitMs).then(options.out, () => undefined);
  return stack;
}

/** Starts `keelson local up` as a detached child, shows its progress, and returns once it is Ready (or throws when it stopped). */
export async function runLocalUpDetached(options: UpOptions, argv: string[]): Promise<void> {
  const dir = resolve(options.dir);
  if (runningPid(dir)) throw new Error(`a local cluster is already running from ${dir}; run keelson local down --dir ${dir}`);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  rmSync(join(dir, 'ready'), { force: true });
  const logPath = join(dir, 'up.log');
  const log = openSync(logPath, 'w');
  const child = spawn(process.execPath, [...process.execArgv, ...argv], { detached: true, stdio: ['ignore', log, log], env: process.env });
  closeSync(log);
  child.unref();
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  options.out(`started in the background (pid ${child.pid}); its log: ${logPath}`);
  // The child keeps its own deadline and exits with a summary; this one only guards against a child that hangs.
  const deadline = Date.now() + (options.readyTimeoutMs ?? defaultReadyTimeoutMs) + 30_000;
  const relay = new LineRelay(logPath, options.out);
  for (;;) {
    const ready = existsSync(join(dir, 'ready'));
    relay.drain();
    if (ready) return;
    if (exited !== undefined) throw new Error(`local up stopped (exit code ${exited}) before the cluster was Ready; its log: ${logPath}`);
    if (Date.now() > deadline)
      throw new Error(
        `local up did not report Ready by its deadline; still running as pid ${child.pid} (keelson local down --dir ${dir}); its log: ${logPath}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Prints the complete lines a growing file gains, each once. */
class LineRelay {
  private offset = 0;
  private partial = '';

  constructor(
    private readonly path: string,
    private readonly out: (line: string) => void,
  ) {}

  drain(): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (read <= 0) break;
        this.offset += read;
        const lines = (this.partial + buffer.subarray(0, read).toString('utf8')).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) this.out(line);
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** Stops the process recorded in DIR/pid (SIGTERM, then SIGKILL after the grace period). */
export async function runLocalDown(dirOption: string, out: (line: string) => void, graceMs = 60_000): Promise<void> {
  const dir = resolve(dirOption);
  const pid = runningPid(dir);
  if (!pid) {
    rmSync(pidFile(dir), { force: true });
    // A stack that died without its shutdown (SIGKILL, a crash) left its claim volumes mounted.
    const stale = await saveAndUnmountClaims(join(dir, 'node'), createLogger({ name: 'local', level: 'warn' }));
    out(`nothing running from ${dir}${stale > 0 ? `; unmounted ${stale} claim volume(s) it left mounted (files kept in node/volume-store)` : ''}`);
    return;
  }
  out(`stopping local cluster (pid ${pid})`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    // In namespace mode the forwarders' process in the host's namespace exits right after the stack.
    if (!runningPid(dir) && !runningPid(dir, forwarderPidFile(dir))) {
      rmSync(pidFile(dir), { force: true });
      out('stopped');
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  process.kill(pid, 'SIGKILL');
  rmSync(pidFile(dir), { force: true });
  // A killed node could not unmount its claim volumes.
  await saveAndUnmountClaims(join(dir, 'node'), createLogger({ name: 'local', level: 'warn' }));
  out('stopped (killed after the grace period)');
}
