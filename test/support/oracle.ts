/**
 * The real-apiserver oracle: etcd + kube-apiserver 1.20.2 + kube-controller-manager (garbage
 * collector and namespace deletion only, or all its controllers), on free ports in a temp dir:
 * loopback, or a given address of an isolated node namespace (ADR 0354). The binaries come
 * from scripts/oracle/build.sh (cached outside the repo); etcd is Debian's etcd-server.
 * Returns the same shape as startTestApiServer() so a contract test can run against either.
 */
import * as k8s from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates } from '../../local/apiserver/security/certs.js';
import { renderKubeconfig } from '../../local/apiserver/security/kubeconfig.js';
import { freePort, waitForPort } from './ports.js';

export const ORACLE_VERSION = '1.20.2';
export const ORACLE_BINARIES = ['kube-apiserver', 'kube-controller-manager'] as const;
const ETCD = '/usr/bin/etcd';

/**
 * The cache folder of scripts/oracle/build.sh: $KEELSON_ORACLE_DIR, else the system cache, else
 * the user's (the build script uses the latter when it cannot write /var/cache).
 */
export function oracleDir(): string {
  if (process.env.KEELSON_ORACLE_DIR) return process.env.KEELSON_ORACLE_DIR;
  const candidates = [`/var/cache/keelson/kube-apiserver-${ORACLE_VERSION}`, join(homedir(), '.cache', 'keelson', `kube-apiserver-${ORACLE_VERSION}`)];
  return candidates.find((dir) => existsSync(join(dir, 'bin', 'kube-apiserver'))) ?? candidates[0];
}

/** Why the oracle cannot start here (undefined when everything it needs is present). */
export function oracleMissing(): string | undefined {
  const dir = oracleDir();
  const absent = ORACLE_BINARIES.map((b) => join(dir, 'bin', b)).filter((p) => !existsSync(p));
  if (!existsSync(ETCD)) absent.push(ETCD);
  if (absent.length === 0) return undefined;
  return `oracle binaries missing: ${absent.join(', ')} (build them with scripts/oracle/ci-step.sh, or set KEELSON_ORACLE_DIR)`;
}

export interface OracleApiServer {
  url: string;
  kubeconfigPath: string;
  /** Bearer token of the admin user (system:masters) in the kubeconfig. */
  token: string;
  caCert: string;
  kubeConfig: k8s.KubeConfig;
  /** Where the processes' logs are (kept until close()). */
  logDir: string;
  close(): Promise<void>;
}

interface Managed {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
}

/** Children and folders still in use; cleaned up if the process exits without close(). */
const running = new Set<ChildProcess>();
const folders = new Set<string>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function launch(name: string, command: string, args: string[], logDir: string): Managed {
  const log = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  return { name, child, exited };
}

async function stop(processes: Managed[]): Promise<void> {
  // Reverse start order: controllers, then the API server, then etcd.
  for (const p of [...processes].reverse()) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
    p.child.kill('SIGTERM');
    const killer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
    await p.exited;
    clearTimeout(killer);
  }
}

/** Polls an HTTPS path with the admin token until it answers 200. */
async function waitForHttps(url: string, token: string, ca: string, timeoutMs: number, alive: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    const dead = alive();
    if (dead) throw new Error(dead);
    const status = await new Promise<number>((resolve) => {
      const req = request(url, { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 2000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (err) => {
        last = err.message;
        resolve(0);
      });
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (status === 200) return;
    if (status) last = `HTTP ${status}`;
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms (${last})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts etcd, kube-apiserver and kube-controller-manager; throws with log tails if one fails. */
export interface OracleOptions {
  readyTimeoutMs?: number;
  /** `RBAC` enforces Roles and bindings (the admin token stays in system:masters); default AlwaysAllow. */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /** Extra bearer-token users (name → token), e.g. an operator whose rights a test grants through RBAC. */
  users?: Record<string, string>;
  /** Service cluster IP range (default 10.0.0.0/24: 254 ClusterIP Services; a fleet needs more). */
  serviceCidr?: string;
  /**
   * Where the API server listens and what it advertises (default 127.0.0.1). 1.20 otherwise takes
   * the advertised address from the default route, which an isolated node namespace has not.
   */
  address?: string;
  /** `all`: every controller of kube-controller-manager (a real control plane); default GC and namespace only. */
  controllers?: 'gc-and-namespace' | 'all';
}

/** kube-controller-manager flags beyond the kubeconfig: which controllers, and what those need. */
function controllerFlags(controllers: OracleOptions['controllers'], dir: string): string[] {
  if (controllers !== 'all') return ['--controllers=garbagecollector,namespace'];
  return [
    '--controllers=*',
    // The attach/detach and volume controllers would create their plugin folder on the host.
    `--flex-volume-plugin-dir=${join(dir, 'flexvolume')}`,
    // The token controller signs ServiceAccount tokens with the key the server verifies them with.
    `--service-account-private-key-file=${join(dir, 'sa.key')}`,
    `--root-ca-file=${join(dir, 'ca.crt')}`,
  ];
}

export async function startOracleApiServer(options: OracleOptions = {}): Promise<OracleApiServer> {
  const missing = oracleMissing();
  if (missing) throw new Error(missing);
  const bin = join(oracleDir(), 'bin');
  const dir = mkdtempSync(join(tmpdir(), 'keelson-oracle-'));
  // etcd fsyncs every write; tmpfs keeps that cheap on the shared machine.
  const etcdDir = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/keelson-oracle-etcd-') : join(dir, 'etcd');
  folders.add(dir).add(etcdDir);
  const processes: Managed[] = [];
  const cleanup = async (): Promise<void> => {
    await stop(processes);
    for (const folder of [dir, etcdDir]) {
      rmSync(folder, { recursive: true, force: true });
      folders.delete(folder);
    }
  };
  try {
    const address = options.address ?? '127.0.0.1';
    const [etcdClient, etcdPeer, apiPort] = await Promise.all([freePort(), freePort(), freePort(address)]);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    processes.push(
      launch(
        'etcd',
        ETCD,
        [
          '--name=oracle',
          `--data-dir=${join(etcdDir, 'data')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-cluster=oracle=http://127.0.0.1:${etcdPeer}`,
          '--log-level=warn',
        ],
        dir,
      ),
    );
    await waitForPort('127.0.0.1', etcdClient, 20_000);

    const certs = generateCertificates([...new Set([address, '127.0.0.1', 'localhost'])]);
    writeFileSync(join(dir, 'ca.crt'), certs.caCert);
    writeFileSync(join(dir, 'server.crt'), certs.serverCert);
    writeFileSync(join(dir, 'server.key'), certs.serverKey);
    const sa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    writeFileSync(join(dir, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    writeFileSync(join(dir, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const token = randomBytes(16).toString('hex');
    const extraUsers = Object.entries(options.users ?? {}).map(([name, userToken], i) => `${userToken},${name},${100 + i}\n`);
    writeFileSync(join(dir, 'tokens.csv'), [`${token},keelson-admin,1,"system:masters"\n`, ...extraUsers].join(''));
    const url = `https://${address}:${apiPort}`;
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, renderKubeconfig({ server: url, caCert: certs.caCert, token, contextName: 'keelson-oracle' }));

    processes.push(
      launch(
        'kube-apiserver',
        join(bin, 'kube-apiserver'),
        [
          `--etcd-servers=${etcdUrl}`,
          `--bind-address=${address}`,
          // Loopback runs keep 1.20's own choice (the host's route); in a node namespace there is none.
          ...(options.address ? [`--advertise-address=${options.address}`] : []),
          `--secure-port=${apiPort}`,
          '--insecure-port=0',
          `--tls-cert-file=${join(dir, 'server.crt')}`,
          `--tls-private-key-file=${join(dir, 'server.key')}`,
          `--cert-dir=${join(dir, 'certs')}`,
          `--service-cluster-ip-range=${options.serviceCidr ?? '10.0.0.0/24'}`,
          '--service-account-issuer=https://kubernetes.default.svc',
          `--service-account-key-file=${join(dir, 'sa.pub')}`,
          `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
          `--token-auth-file=${join(dir, 'tokens.csv')}`,
          `--authorization-mode=${options.authorizationMode ?? 'AlwaysAllow'}`,
          // Pods need no default ServiceAccount (no token controller runs here).
          '--disable-admission-plugins=ServiceAccount',
          '--enable-priority-and-fairness=false',
          '--logtostderr=true',
          '--v=0',
        ],
        dir,
      ),
    );
    const alive = (): string | undefined => {
      const dead = processes.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      return dead ? `${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}):\n${tail(join(dir, `${dead.name}.log`))}` : undefined;
    };
    await waitForHttps(`${url}/readyz`, token, certs.caCert, options.readyTimeoutMs ?? 60_000, alive);

    processes.push(
      launch(
        'kube-controller-manager',
        join(bin, 'kube-controller-manager'),
        [
          `--kubeconfig=${kubeconfigPath}`,
          ...controllerFlags(options.controllers, dir),
          '--leader-elect=false',
          '--port=0',
          '--secure-port=0',
          '--logtostderr=true',
          '--v=0',
        ],
        dir,
      ),
    );

    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    return { url, kubeconfigPath, token, caCert: certs.caCert, kubeConfig, logDir: dir, close: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
