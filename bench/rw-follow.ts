/**
 * How fast `-rw` follows a new primary (not a test): the whole local stack (API server stand-in,
 * controllers, node agent with its service proxy, operator), one DatabaseCluster of 3 instances
 * (ttl 10, loop_wait 2, retry_timeout 4, default primary_hang_timeout). Each round freezes every
 * PostgreSQL process of the primary (SIGSTOP) and samples every 50 ms, on this machine's clock:
 * the members' servers directly (writable?), the pods (role label, Ready), the -rw Endpoints, the
 * service proxy's backends, and a write through the -rw cluster IP on a new connection. Per round
 * it prints freeze → new primary writable, then each later step relative to that instant:
 * label, Ready, Endpoints, proxy, first write through -rw.
 * Run: npm exec -- node --import tsx bench/rw-follow.ts [--rounds N]   (the pods need the Node.js npm ci installed)
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLogger } from '../lib/log.js';
import { Ports } from '../lib/ports.js';
import { Labels, names } from '../api/naming.js';
import { isPodReady } from '../operator/reconcile/status.js';
import { descendantsOf, parseProcStat } from '../sidecar/ha-node/fence/kill-server.js';
import { clusterDriver, viaClusterIp } from '../test/operator/e2e-support.js';
import { startE2eStack } from '../test/operator/e2e-stack.js';
import { median } from './stats.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a positive integer, not ${args.rounds}`);
const ns = 'default';
const cluster = 'follow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every process below `pid`, and `pid` itself. */
function treeOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (stat) parents.set(Number(entry), stat.ppid);
    } catch {
      // gone
    }
  }
  return [pid, ...descendantsOf(pid, parents)];
}

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // gone (fenced)
    }
  }
}

/** One statement on a new connection, bounded; undefined when it failed. */
async function once(host: string, password: string, text: string): Promise<Record<string, unknown> | undefined> {
  const client = new pg.Client({
    host,
    port: Ports.postgres,
    user: 'postgres',
    password,
    database: 'postgres',
    connectionTimeoutMillis: 700,
    query_timeout: 700,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(text)).rows[0] ?? {};
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Calls `sample` every 50 ms until `done()`; returns the first instant it said true. */
async function firstTrue(sample: () => Promise<boolean> | boolean, done: () => boolean, deadline: number): Promise<number | undefined> {
  while (!done() && Date.now() < deadline) {
    const at = Date.now();
    if (await sample()) return at;
    await sleep(50);
  }
  return undefined;
}

const logger = createLogger({ name: 'rw-follow', level: process.env.LOG_LEVEL ?? 'silent' });
const e2e = await startE2eStack('rw-follow', { logger, ipPrefix: '127.0.93' });
const { api, stack } = e2e;
const driver = clusterDriver(api, ns, cluster, viaClusterIp);
const rows: Array<Record<string, number | undefined>> = [];
try {
  await driver.create({ instances: 3, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 } });
  await driver.healthyWith(3, 180_000);
  await driver.readPassword();
  const password = Buffer.from((await api.core.readNamespacedSecret({ namespace: ns, name: `${cluster}-superuser` })).data!.password!, 'base64').toString(
    'utf8',
  );
  const rwIp = (await viaClusterIp(api, ns, names(cluster).rwService))!;
  await driver.query(names(cluster).rwService, 'CREATE TABLE IF NOT EXISTS follow (at timestamptz)');
  for (let round = 1; round <= rounds; round += 1) {
    const old = (await driver.status()).currentPrimary!;
    const pods = await driver.pods();
    const ipOf = new Map(pods.map((p) => [p.metadata!.name!, p.status!.podIP!]));
    const others = pods.filter((p) => p.metadata!.name !== old).map((p) => p.metadata!.name!);
    const postmaster = Number(String((await once(ipOf.get(old)!, password, "SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1) AS pid"))?.pid));
    const frozen = treeOf(postmaster);
    const deadline = Date.now() + 90_000;
    const frozenAt = Date.now();
    signal(frozen, 'SIGSTOP');
    let successor: string | undefined;
    const writableAt = await firstTrue(
      async () => {
        for (const name of others) if ((await once(ipOf.get(name)!, password, 'SELECT pg_is_in_recovery() AS r'))?.r === false) successor = name;
        return successor !== undefined;
      },
      () => false,
      deadline,
    );
    const ip = successor ? ipOf.get(successor)! : '';
    const podNow = async () => (await driver.pods()).find((p) => p.metadata!.name === successor);
    const [labelAt, readyAt, endpointsAt, proxyAt, rwWriteAt] = await Promise.all([
      firstTrue(
        async () => (await podNow())?.metadata?.labels?.[Labels.role] === 'primary',
        () => !successor,
        deadline,
      ),
      firstTrue(
        async () => {
          const pod = await podNow();
          return pod !== undefined && isPodReady(pod);
        },
        () => !successor,
        deadline,
      ),
      firstTrue(
        async () => {
          const endpoints = await api.core.readNamespacedEndpoints({ namespace: ns, name: names(cluster).rwService }).catch(() => undefined);
          const listed = (endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
          return listed.length === 1 && listed[0] === ip;
        },
        () => !successor,
        deadline,
      ),
      firstTrue(
        () => {
          const backends = stack.node.proxy.snapshot()[`${rwIp}:${Ports.postgres}`] ?? [];
          return backends.length === 1 && backends[0]!.startsWith(`${ip}:`);
        },
        () => !successor,
        deadline,
      ),
      firstTrue(
        async () => (await once(rwIp, password, 'INSERT INTO follow VALUES (now()) RETURNING host(inet_server_addr()) AS addr'))?.addr === ip,
        () => !successor,
        deadline,
      ),
    ]);
    signal(frozen, 'SIGCONT');
    const after = (at: number | undefined) => (at !== undefined && writableAt !== undefined ? at - writableAt : undefined);
    const row = {
      round,
      writable: writableAt && writableAt - frozenAt,
      label: after(labelAt),
      ready: after(readyAt),
      endpoints: after(endpointsAt),
      proxy: after(proxyAt),
      rwWrite: after(rwWriteAt),
    };
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
    await driver.healthyWith(3, 180_000);
  }
} finally {
  await e2e.close();
}

const show = (v: number | undefined) => (v === undefined ? '—' : `${(v / 1000).toFixed(2)} s`);
const columns = ['writable', 'label', 'ready', 'endpoints', 'proxy', 'rwWrite'] as const;
process.stdout.write(
  `\n| round | freeze → writable | writable → label | → Ready | → Endpoints | → proxy | → write through -rw |\n|---|---|---|---|---|---|---|\n`,
);
for (const row of rows) process.stdout.write(`| ${row.round} | ${columns.map((c) => show(row[c])).join(' | ')} |\n`);
const med = (c: (typeof columns)[number]) => median(rows.map((r) => r[c]).filter((v): v is number => v !== undefined));
process.stdout.write(`| median | ${columns.map((c) => show(med(c))).join(' | ')} |\n`);
process.stdout.write(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
