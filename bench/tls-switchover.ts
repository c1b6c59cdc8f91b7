/**
 * The switchover client gap through the pooler, TLS against plaintext (a part of bench/tls.ts): a
 * 2-member cluster (real ha-node processes, PostgreSQL 15 serving a certificate of the cluster's
 * kind, Lease DCS on the stand-in) with two `keelson pooler`s ha-node pauses and retargets, one in
 * plaintext and one with the cluster's TLS files (verify-full from its client, verify-ca to
 * PostgreSQL). During each switchover one client inserts every 20 ms through each pooler: failed
 * inserts and the longest gap between acknowledged inserts, per pooler, in the same switchover.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createCertificateAuthority, issueCertificate } from '../lib/tls-certificates.js';
import { startCluster } from '../test/sidecar/ha-node/harness.js';
import { settled } from '../test/sidecar/ha-node/traffic.js';
import { poolerPasswordFile, scratchDir, startTestPooler, type TestPooler } from '../test/sidecar/pooler/support.js';
import { freePort } from '../test/support/ports.js';
import { insertLoop, requestSwitchover, type Tally } from './switchover-traffic.js';

const scope = 'tlsbench';
const poolerName = `${scope}-pooler-rw.default.svc`;
const api = { username: 'keelson', password: 'bench-api-secret' };
const app = { user: 'benchapp', password: 'benchapp-secret' };

export async function switchoverGaps(runs: number): Promise<void> {
  const dir = scratchDir();
  const ca = createCertificateAuthority(`${scope}.default.keelson.io`);
  const server = issueCertificate(ca, `${scope}-rw`, { usage: 'server', hosts: [`*.${scope}-headless.default.svc`, poolerName] });
  const mounted = join(dir, 'server-tls');
  mkdirSync(mounted);
  for (const [file, text] of Object.entries({ 'tls.crt': server.cert, 'tls.key': server.key, 'ca.crt': ca.cert, 'client-ca.crt': ca.cert }))
    writeFileSync(join(mounted, file), text);
  const controlPorts = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const passwordFile = poolerPasswordFile(dir, 'bench-pooler-secret');
  const cluster = await startCluster({
    members: 2,
    ttl: 8,
    loopWait: 1,
    retryTimeout: 2,
    scope,
    env: {
      KEELSON_API_USERNAME: api.username,
      KEELSON_API_PASSWORD: api.password,
      KEELSON_POOLERS: controlPorts.map((port) => `127.0.0.1:${port}`).join(','),
      KEELSON_POOLER_PASSWORD_FILE: passwordFile,
      KEELSON_SERVER_TLS_DIR: mounted,
    },
  });
  const poolers: TestPooler[] = [];
  try {
    let primary = await settled(cluster, 1);
    await cluster.waitFor('the pooler role', async () => (await primary.query("SELECT 1 FROM pg_roles WHERE rolname = 'keelson_pooler'")).length === 1, 60_000);
    await primary.query(`CREATE ROLE ${app.user} LOGIN PASSWORD '${app.password}'`);
    const owner = new pg.Client({ connectionString: primary.pgUrl.replace(/\/postgres$/, '/app') });
    await owner.connect();
    await owner.query(`CREATE TABLE bench_ticks (id bigserial PRIMARY KEY); GRANT ALL ON bench_ticks, bench_ticks_id_seq TO ${app.user}`);
    await owner.end();
    const target = { host: primary.ip, port: primary.pgPort };
    const common = { baseDir: dir, target, passwordFile, credentials: api };
    poolers.push(await startTestPooler({ ...common, controlPort: controlPorts[0]! }));
    poolers.push(await startTestPooler({ ...common, controlPort: controlPorts[1]!, tlsDir: mounted }));
    const [plainPooler, tlsPooler] = poolers as [TestPooler, TestPooler];
    const connect = async (pooler: TestPooler, tls: boolean) => {
      const client = new pg.Client({
        host: pooler.host,
        port: pooler.port,
        ...app,
        database: 'app',
        connectionTimeoutMillis: 1000,
        query_timeout: 5000,
        ...(tls ? { ssl: { ca: readFileSync(join(mounted, 'ca.crt'), 'utf8'), servername: poolerName, rejectUnauthorized: true } } : {}),
      });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    };
    const tallies: Record<'plaintext' | 'TLS', Tally[]> = { plaintext: [], TLS: [] };
    for (let run = 1; run <= runs; run += 1) {
      primary = await settled(cluster, 1);
      const candidate = cluster.members.find((m) => m !== primary)!;
      const plain = insertLoop(() => connect(plainPooler, false));
      const tls = insertLoop(() => connect(tlsPooler, true));
      await new Promise((r) => setTimeout(r, 1000));
      const reply = await requestSwitchover(primary, candidate, api);
      await new Promise((r) => setTimeout(r, 3000));
      const [p, t] = await Promise.all([plain.stop(), tls.stop()]);
      tallies.plaintext.push(p);
      tallies.TLS.push(t);
      console.log(
        `switchover ${run} (HTTP ${reply.status}, load ${loadavg()[0]!.toFixed(1)}): plaintext ${p.failures} failed, gap ${Math.round(p.longestGapMs)} ms; TLS ${t.failures} failed, gap ${Math.round(t.longestGapMs)} ms`,
      );
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    console.log(`\nswitchover client gap through the pooler, ${runs} switchovers (median; longest)`);
    for (const [label, list] of Object.entries(tallies))
      console.log(
        `  ${label.padEnd(10)} gap ${Math.round(median(list.map((x) => x.longestGapMs)))} ms; ${Math.round(Math.max(...list.map((x) => x.longestGapMs)))} ms; failed inserts ${list.reduce((n, x) => n + x.failures, 0)}`,
      );
  } finally {
    for (const pooler of poolers) await pooler.running.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
