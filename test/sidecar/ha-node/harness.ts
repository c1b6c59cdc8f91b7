import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import pg from 'pg';
import { ContainerNames } from '../../../api/naming.js';
import { startApiServer, type RunningApiServer } from '../../../local/apiserver/server.js';
import { createLogger } from '../../../lib/log.js';
import { freePort } from '../../support/ports.js';
import { postgresRunAs } from '../../support/postgres.js';
import { PodStatusReporter } from './kubelet.js';

/**
 * A test cluster of ha-node processes (each on its own 127.0.0.N address with its own PostgreSQL)
 * against the API server stand-in. Every member is a real `keelson ha-node` process.
 */
export const repoRoot = new URL('../../../', import.meta.url).pathname;
export const superPassword = 'super-secret-test';
export const replPassword = 'repl-secret-test';

export interface MemberOptions {
  tags?: Record<string, unknown>;
  env?: Record<string, string>;
}

export interface ClusterOptions {
  members?: number;
  ttl?: number;
  loopWait?: number;
  retryTimeout?: number;
  scope?: string;
  env?: Record<string, string>;
  memberOptions?: MemberOptions[];
  /** Start every member at once (default); false leaves starting to the test. */
  autoStart?: boolean;
  /**
   * How long after a member process exits its pod status says so (the kubelet's PLEG relist is
   * 1 s); default 1000. Negative: no container status at all (ha-node then has no kubelet signal).
   */
  kubeletDelayMs?: number;
  /** Share an API server stand-in with another cluster (the caller closes it). */
  api?: RunningApiServer;
}

export class Member {
  process: ChildProcess | undefined;
  readonly dataDir: string;
  readonly logPath: string;

  constructor(
    readonly name: string,
    readonly ip: string,
    readonly apiPort: number,
    readonly pgPort: number,
    readonly baseDir: string,
    private readonly env: Record<string, string>,
    private readonly kubelet?: PodStatusReporter,
  ) {
    this.dataDir = join(baseDir, 'data', 'pgdata');
    this.logPath = join(baseDir, 'ha-node.log');
  }

  get apiUrl(): string {
    return `http://${this.ip}:${this.apiPort}`;
  }

  get pgUrl(): string {
    return `postgres://postgres:${superPassword}@${this.ip}:${this.pgPort}/postgres`;
  }

  start(): void {
    const log = createWriteStream(this.logPath, { flags: 'a' });
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bin/keelson.ts'), 'ha-node'], {
      cwd: repoRoot,
      env: { ...process.env, ...this.env, LOG_LEVEL: process.env.HA_TEST_LOG_LEVEL ?? 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.process = child;
    const kubelet = this.kubelet;
    if (!kubelet) return;
    void kubelet.running(this.name);
    child.once('exit', (code) => {
      setTimeout(() => {
        if (this.process === child) void kubelet.terminated(this.name, code ?? 137);
      }, kubelet.delayMs).unref();
    });
  }

  /** Stops the ha-node cleanly (SIGTERM) and waits for it to exit. */
  async stop(timeoutMs = 30_000): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  killHaNode(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.process?.kill(signal);
  }

  postmasterPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  fencerPids(): number[] {
    return processIds((pid) => {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmd.includes('fence') && cmd.includes(this.dataDir);
    });
  }

  /** Processes working in the data directory: backends of a SIGKILLed postmaster linger a moment and keep its shared memory. */
  dataDirPids(): number[] {
    const dir = realpathSync(this.dataDir);
    return processIds((pid) => readlinkSync(`/proc/${pid}/cwd`) === dir);
  }

  /** Kill -9 of everything in the "pod": ha-node, postmaster and the fencing process. */
  killPod(): void {
    this.killHaNode('SIGKILL');
    const pid = this.postmasterPid();
    if (pid) process.kill(pid, 'SIGKILL');
    for (const fencer of this.fencerPids()) {
      try {
        process.kill(fencer, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }

  async get(path: string): Promise<{ status: number; body: string; json: () => Record<string, unknown> }> {
    const response = await fetch(`${this.apiUrl}${path}`, { signal: AbortSignal.timeout(5000) });
    const body = await response.text();
    return { status: response.status, body, json: () => JSON.parse(body) as Record<string, unknown> };
  }

  async status(path: string, method = 'GET'): Promise<number> {
    try {
      const response = await fetch(`${this.apiUrl}${path}`, { method, signal: AbortSignal.timeout(5000) });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }

  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.pgUrl, connectionTimeoutMillis: 2000, statement_timeout: 5000, query_timeout: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** True when a fresh connection gets a writable (non-recovery) session. */
  async isWritable(): Promise<boolean> {
    try {
      const rows = await this.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return rows[0]?.r === false;
    } catch {
      return false;
    }
  }

  log(): string {
    try {
      return readFileSync(this.logPath, 'utf8');
    } catch {
      return '';
    }
  }
}

/** The ids of the processes that match (a process that goes away meanwhile does not). */
function processIds(matches: (pid: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (matches(entry)) pids.push(Number(entry));
    } catch {
      // process went away
    }
  }
  return pids;
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

export interface TestCluster {
  api: RunningApiServer;
  kubeConfig: k8s.KubeConfig;
  members: Member[];
  scope: string;
  baseDir: string;
  leases(): Promise<k8s.V1Lease[]>;
  leaderName(): Promise<string | undefined>;
  waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** The one member answering /primary with 200 (fails when there are several). */
  primary(): Promise<Member | undefined>;
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const count = options.members ?? 3;
  const scope = options.scope ?? 'demo';
  const baseDir = mkdtempSync(join(tmpdir(), 'keelson-ha-'));
  const runAs = await postgresRunAs();
  if (runAs) chownSync(baseDir, runAs.uid, runAs.gid);
  const api = options.api ?? (await startApiServer({ dir: join(baseDir, 'apiserver'), logger: createLogger({ name: 'apiserver', level: 'warn' }) }));
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(api.kubeconfigPath);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const coordination = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  const kubeletDelayMs = options.kubeletDelayMs ?? 1000;
  const kubelet = kubeletDelayMs >= 0 ? new PodStatusReporter(kubeConfig, 'default', kubeletDelayMs) : undefined;
  const members: Member[] = [];
  // Every member reaches the API server under its own identity, as a kubelet's projected token
  // gives it: a ServiceAccount token bound to its pod (so a fault can cut one member off).
  await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: scope } } }).catch((err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err;
  });
  for (let i = 0; i < count; i += 1) {
    const ip = `127.0.0.${i + 2}`;
    const name = `${scope}-${i}`;
    const dir = join(baseDir, name);
    mkdirSync(dir, { recursive: true });
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name, labels: { 'keelson.io/cluster': scope } },
        spec: { serviceAccountName: scope, containers: [{ name: ContainerNames.postgres, image: 'keelson' }] },
      },
    });
    const issued = await core.createNamespacedServiceAccountToken({
      name: scope,
      namespace: 'default',
      body: { spec: { audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid } } },
    });
    const kubeconfigPath = join(dir, 'kubeconfig');
    api.writeKubeconfig(kubeconfigPath, { token: issued.status!.token });
    const apiPort = await freePort(ip);
    const pgPort = await freePort(ip);
    const memberOptions = options.memberOptions?.[i] ?? {};
    const env: Record<string, string> = {
      POD_NAME: name,
      POD_NAMESPACE: 'default',
      POD_IP: ip,
      KEELSON_CLUSTER: scope,
      KEELSON_API_LISTEN: `${ip}:${apiPort}`,
      KEELSON_PG_LISTEN: ip,
      KEELSON_PG_PORT: String(pgPort),
      PGDATA: join(dir, 'data', 'pgdata'),
      KEELSON_SUPERUSER_PASSWORD: superPassword,
      KEELSON_REPLICATION_PASSWORD: replPassword,
      KEELSON_DATABASE: 'app',
      KEELSON_TTL: String(options.ttl ?? 8),
      KEELSON_LOOP_WAIT: String(options.loopWait ?? 1),
      KEELSON_RETRY_TIMEOUT: String(options.retryTimeout ?? 3),
      KEELSON_PG_PARAMETERS: JSON.stringify({ fsync: false, full_page_writes: true, shared_buffers: '32MB', max_connections: 40 }),
      KEELSON_TAGS: JSON.stringify(memberOptions.tags ?? {}),
      KUBECONFIG: kubeconfigPath,
      ...options.env,
      ...memberOptions.env,
    };
    if (runAs) chownSync(dir, runAs.uid, runAs.gid);
    members.push(new Member(name, ip, apiPort, pgPort, dir, env, kubelet));
  }
  if (options.autoStart !== false) for (const member of members) member.start();

  const cluster: TestCluster = {
    api,
    kubeConfig,
    members,
    scope,
    baseDir,
    async leases() {
      return (await coordination.listNamespacedLease({ namespace: 'default', labelSelector: `keelson.io/cluster=${scope}` })).items;
    },
    async leaderName() {
      const lease = (await cluster.leases()).find((l) => l.metadata?.name === `${scope}-leader`);
      return lease?.spec?.holderIdentity || undefined;
    },
    async waitFor(what, check, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await check().catch(() => undefined);
        if (value !== undefined && value !== false) return value as never;
        if (Date.now() > deadline) {
          const tails = members.map((m) => `--- ${m.name}\n${m.log().split('\n').slice(-15).join('\n')}`).join('\n');
          throw new Error(`timed out waiting for ${what}\n${tails}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async primary() {
      const codes = await Promise.all(members.map((m) => m.status('/primary')));
      const primaries = members.filter((_, i) => codes[i] === 200);
      if (primaries.length > 1) throw new Error(`two primaries: ${primaries.map((m) => m.name).join(', ')}`);
      return primaries[0];
    },
    async stop() {
      await Promise.all(members.map((m) => m.stop()));
      for (const member of members) {
        for (const fencer of member.fencerPids()) {
          try {
            process.kill(fencer, 'SIGKILL');
          } catch {
            // gone
          }
        }
        const pid = member.postmasterPid();
        if (pid) process.kill(pid, 'SIGKILL');
      }
      if (!options.api) await api.close();
      if (!process.env.HA_TEST_KEEP) rmSync(baseDir, { recursive: true, force: true });
    },
  };
  return cluster;
}
