import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { Ports } from '../../lib/ports.js';
import { createCertificateAuthority } from '../../lib/tls-certificates.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';

/**
 * The cluster's certificates on the stand-in with real PostgreSQL: psql verifies -rw and -ro by
 * their Service names with only the Secret's CA, a client trusting another CA is refused,
 * replicas stream over TLS with the replication certificate, a rotation on request reaches every
 * member by reload (postmaster start time unchanged), and a bad user Secret is a condition.
 */
const ns = 'default';
const name = 'tlsdemo';
const run = promisify(execFile);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const logger = createLogger({ name: 'certificates-e2e', level: process.env.LOG_LEVEL ?? 'silent' });

describe('cluster TLS end to end (stand-in, local node, real PostgreSQL)', { timeout: 300_000 }, () => {
  let e2e: E2eStack;
  let api: OperatorKubeApi;
  let demo: ClusterDriver;
  let password = '';
  let caFile = '';

  const secretText = async (secret: string, key: string) =>
    Buffer.from((await api.core.readNamespacedSecret({ namespace: ns, name: secret })).data?.[key] ?? '', 'base64').toString();
  const psql = async (service: string, rootCert: string, sql: string) => {
    const conninfo = `host=${service}.${ns}.svc hostaddr=${await viaClusterIp(api, ns, service)} port=${Ports.postgres} user=postgres dbname=postgres sslmode=verify-full sslrootcert=${rootCert} connect_timeout=5`;
    return (await run('psql', ['-X', '-At', '-d', conninfo, '-c', sql], { env: { ...process.env, PGPASSWORD: password } })).stdout.trim();
  };
  /** The certificate a new connection to this address is served. */
  const served = (address: string) =>
    /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(
      spawnSync('openssl', ['s_client', '-starttls', 'postgres', '-connect', `${address}:${Ports.postgres}`], { input: '', timeout: 10_000, encoding: 'utf8' })
        .stdout,
    )?.[0] ?? '';
  const condition = async () => (await demo.status()).conditions?.find((c) => c.type === 'CertificatesReady');

  before(async () => {
    e2e = await startE2eStack('certificates-e2e', { logger, ipPrefix: '127.0.61' });
    api = e2e.api;
    demo = clusterDriver(api, ns, name, viaClusterIp);
    await demo.create({ instances: 2, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 }, pooler: { enabled: true, instances: 1 } });
    await demo.healthyWith(2);
    await demo.readPassword();
    password = await secretText(`${name}-superuser`, 'password');
    caFile = join(e2e.dir, 'ca.crt');
    writeFileSync(caFile, await secretText(`${name}-app`, 'ca.crt'));
  });
  after(async () => {
    await e2e?.close();
  });

  it('psql with verify-full and only the CA from the app Secret reaches -rw and -ro by their Service names', async () => {
    assert.equal(await psql(`${name}-rw`, caFile, 'SELECT ssl::text || pg_is_in_recovery()::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), 'truefalse');
    assert.equal(await psql(`${name}-ro`, caFile, 'SELECT ssl::text || pg_is_in_recovery()::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), 'truetrue');
    const stranger = join(e2e.dir, 'stranger.crt');
    writeFileSync(stranger, createCertificateAuthority('stranger').cert);
    await assert.rejects(psql(`${name}-rw`, stranger, 'SELECT 1'), /certificate verify failed/);
  });

  it('psql verifies the pooler by its Service name; PgBouncer reaches PostgreSQL over TLS', async () => {
    const service = `${name}-pooler-rw`;
    const appPassword = await secretText(`${name}-app`, 'password');
    const conninfo = async () =>
      `host=${service}.${ns}.svc hostaddr=${await viaClusterIp(api, ns, service)} port=${Ports.pooler} user=app dbname=app sslmode=verify-full sslrootcert=${caFile} connect_timeout=5`;
    const through = await eventually(
      'a verified session through the pooler',
      async () => {
        const result = await run('psql', ['-X', '-At', '-d', await conninfo(), '-c', 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'], {
          env: { ...process.env, PGPASSWORD: appPassword },
        }).catch(() => undefined);
        return result?.stdout.trim() || undefined;
      },
      60_000,
    );
    assert.equal(through, 't');
  });

  it('the replica streams over TLS, presenting the replication certificate', async () => {
    const rows = await eventually(
      'a streaming replica',
      async () => {
        const found = await demo.query(
          `${name}-rw`,
          "SELECT s.ssl, s.client_dn FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid) WHERE r.state = 'streaming'",
        );
        return found.length === 1 ? found : undefined;
      },
      30_000,
    );
    assert.deepEqual(rows, [{ ssl: true, client_dn: '/CN=replicator' }]);
  });

  it('a rotation on request reaches every member by reload: new certificate served, postmaster unchanged, replica still streaming', async () => {
    const started = await demo.query(`${name}-rw`, 'SELECT pg_postmaster_start_time()::text AS t');
    const before = await secretText(`${name}-server-tls`, 'tls.crt');
    await api.custom.patchNamespacedCustomObject(
      {
        group: 'keelson.io',
        version: 'v1',
        namespace: ns,
        plural: 'databaseclusters',
        name,
        body: { metadata: { annotations: { 'keelson.io/rotate-certificates': 'e2e-1' } } },
      },
      mergePatch,
    );
    const next = await eventually(
      'a new server certificate',
      async () => {
        const cert = await secretText(`${name}-server-tls`, 'tls.crt');
        return cert !== before ? cert : undefined;
      },
      30_000,
    );
    const addresses = (await demo.pods()).map((pod) => pod.status!.podIP!);
    assert.equal(addresses.length, 2);
    for (const address of addresses)
      await eventually(`${address} serves the new certificate`, async () => (served(address).trim() === next.trim() ? true : undefined), 40_000);
    assert.deepEqual(await demo.query(`${name}-rw`, 'SELECT pg_postmaster_start_time()::text AS t'), started);
    await eventually(
      'still streaming',
      async () =>
        (await demo.query(`${name}-rw`, "SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'"))[0]?.n === 1 ? true : undefined,
      30_000,
    );
  });

  it('a missing user Secret is a False condition naming the field; the cluster keeps serving', async () => {
    const patch = (certificates: Record<string, unknown>) =>
      api.custom.patchNamespacedCustomObject(
        { group: 'keelson.io', version: 'v1', namespace: ns, plural: 'databaseclusters', name, body: { spec: { certificates } } },
        mergePatch,
      );
    await patch({ clientCASecret: 'no-such-ca' });
    const refused = await eventually('CertificatesReady False', async () => ((await condition())?.status === 'False' ? await condition() : undefined), 30_000);
    assert.equal(refused?.message, 'spec.certificates.clientCASecret: Secret "no-such-ca" not found');
    const events = (await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'CertificateRefused');
    assert.ok(events.some((e) => e.message === refused?.message));
    assert.equal(await psql(`${name}-rw`, caFile, 'SELECT 1'), '1');
    await patch({ clientCASecret: null });
    await eventually('CertificatesReady True again', async () => ((await condition())?.status === 'True' ? true : undefined), 30_000);
  });
});
