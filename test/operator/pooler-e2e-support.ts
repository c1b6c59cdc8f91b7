import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadKubeConfig } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/log.js';
import { Ports } from '../../lib/ports.js';
import { startLocalStack, type LocalStack } from '../../local/cluster/stack.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { names, SecretKeys } from '../../api/naming.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { eventually } from './support.js';
import { clusterCa, podName, serviceName, verifyFull } from './cluster-tls.js';

/**
 * A DatabaseCluster with its pooler on the stand-in (local node, real PostgreSQL and PgBouncer,
 * the operator): what the operator-level pooler tests share. Applications connect as the
 * application owner through `<name>-pooler-rw`; the test table `ticks` is the one the pooler
 * load helper (test/sidecar/pooler/load.ts) writes.
 */
export interface PooledCluster {
  stack: LocalStack;
  api: OperatorKubeApi;
  driver: ClusterDriver;
  name: string;
  namespace: string;
  /** A client of <name>-pooler-rw as the application owner, in the application database. */
  connect(): Promise<pg.Client>;
  /** A superuser client of one pod's PostgreSQL, in the application database. */
  direct(podName: string): Promise<pg.Client>;
  /** How many of these ids the table holds on that pod. */
  countOn(podName: string, ids: number[]): Promise<number>;
  podIp(podName: string): Promise<string>;
  /** Kills every process of the pod (its containers restart, as after a crash). */
  crashPod(podName: string): number;
  close(): Promise<void>;
}

export async function startPooledCluster(options: { name: string; ipPrefix: string; spec: Record<string, unknown> }): Promise<PooledCluster> {
  const namespace = 'default';
  const { name } = options;
  const dir = mkdtempSync(join(tmpdir(), `keelson-${name}-`));
  chmodSync(dir, 0o755); // the database processes run as the postgres account and must reach their folders
  const logger = createLogger({ name, level: process.env.LOG_LEVEL ?? 'silent' });
  const stack = await startLocalStack({ dir, logger, operatorVersion: '0.1.0', ipPrefix: options.ipPrefix });
  const close = async () => {
    await stack.close();
    // KEELSON_E2E_KEEP=1 keeps the pods' folders and logs for a look after a failure.
    if (process.env.KEELSON_E2E_KEEP === '1') process.stderr.write(`# kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  };
  try {
    const api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
    const driver = clusterDriver(api, namespace, name, viaClusterIp);
    const secretValue = async (secret: string, key: string) =>
      Buffer.from((await api.core.readNamespacedSecret({ namespace, name: secret })).data![key]!, 'base64').toString('utf8');
    const podIp = async (podName: string) => {
      const ip = (await driver.pods()).find((p) => p.metadata?.name === podName && !p.metadata.deletionTimestamp)?.status?.podIP;
      if (!ip) throw new Error(`${podName} has no address`);
      return ip;
    };
    const open = async (config: pg.ClientConfig) => {
      const client = new pg.Client({ ...config, database: 'app', connectionTimeoutMillis: 5_000, query_timeout: 15_000 });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    };
    await driver.create(options.spec);
    const instances = Number(options.spec.instances ?? 1);
    await driver.healthyWith(instances, 180_000);
    const app = {
      user: await secretValue(names(name).appSecret, SecretKeys.username),
      password: await secretValue(names(name).appSecret, SecretKeys.password),
    };
    const superuser = { user: 'postgres', password: await secretValue(names(name).superuserSecret, SecretKeys.password) };
    const rwAddress = await eventually('the pooler Service address', () => viaClusterIp(api, namespace, names(name).poolerRwService), 30_000);
    // Verified TLS both ways in (every remote session needs TLS): the pooler by its Service's name, a member by its own.
    const ca = await clusterCa(api, namespace, name);
    const connect = () => open({ host: rwAddress, port: Ports.postgres, ...app, ssl: verifyFull(ca, serviceName(namespace, names(name).poolerRwService)) });
    const direct = async (pod: string) =>
      open({ host: await podIp(pod), port: Ports.postgres, ...superuser, ssl: verifyFull(ca, podName(namespace, name, pod)) });
    // The pooler pods start, are pointed at the primary, and authenticate the owner through auth_query.
    await eventually(
      'an application connection through the pooler',
      async () => {
        const client = await connect();
        try {
          await client.query('CREATE TABLE IF NOT EXISTS ticks (id bigserial PRIMARY KEY, at timestamptz DEFAULT now())');
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      120_000,
    );
    return {
      stack,
      api,
      driver,
      name,
      namespace,
      connect,
      direct,
      podIp,
      async countOn(podName, ids) {
        const client = await direct(podName);
        try {
          return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM ticks WHERE id = ANY($1::bigint[])', [ids])).rows[0]!.n);
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      crashPod(podName) {
        const worker = [...stack.node.agent.workers.values()].find((w) => w.pod.metadata?.name === podName && !w.isTerminated);
        if (!worker) throw new Error(`no running pod ${podName} on the node`);
        return worker.crash();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
