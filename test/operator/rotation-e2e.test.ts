import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/log.js';
import { Ports } from '../../lib/ports.js';
import { pemCertificates } from '../../lib/tls-certificates.js';
import { names, selectorString } from '../../api/naming.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { runCtl } from '../ctl/ctl-runner.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from './e2e-support.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { eventually } from './support.js';
import { connectVerified, startTlsWriter, type TlsTarget, type TlsWriterResult } from './tls-writer.js';

/**
 * Rotation under writers (stand-in, local node, real PostgreSQL and PgBouncer, the operator):
 * applications write through `<name>-pooler-rw` and straight to `<name>-rw`, both verify-full
 * against the CA of the app Secret (kept up to date in a file, as a mounted Secret is), each
 * opening new connections as it goes. `keelson ctl rotate-certificates`, then `--ca`: no
 * transaction fails, no PostgreSQL restarts (pg_postmaster_start_time() of every member kept),
 * and afterwards every member and the pooler serve the Secret's new certificate
 * (`openssl s_client -starttls postgres`).
 */
const ns = 'default';
const name = 'rotor';
const logger = createLogger({ name: 'rotation-e2e', level: process.env.LOG_LEVEL ?? 'silent' });

describe('certificate and CA rotation under writers (stand-in, real PostgreSQL and PgBouncer)', { timeout: 1_200_000 }, () => {
  let e2e: E2eStack;
  let api: OperatorKubeApi;
  let demo: ClusterDriver;
  let caFile = '';
  let app: { user: string; password: string };
  let superuser: { user: string; password: string };
  let caSync: NodeJS.Timeout | undefined;

  const secretText = async (secret: string, key: string) =>
    Buffer.from((await api.core.readNamespacedSecret({ namespace: ns, name: secret })).data?.[key] ?? '', 'base64').toString();
  const serviceTarget = async (service: string, port: number): Promise<TlsTarget> => ({
    host: await eventually(`${service} address`, () => viaClusterIp(api, ns, service), 30_000),
    port,
    servername: `${service}.${ns}.svc`,
    ...app,
    database: 'app',
    caFile,
  });
  /** Each database pod: its name and address. */
  const members = async () => (await demo.pods()).map((pod) => ({ name: pod.metadata!.name!, address: pod.status!.podIP! }));
  /** pg_postmaster_start_time() of every member, over verify-full by the pod's name. */
  const postmasterStarts = async () => {
    const starts: Record<string, string> = {};
    for (const member of await members()) {
      const client = await connectVerified(
        {
          host: member.address,
          port: Ports.postgres,
          servername: `${member.name}.${names(name).headlessService}.${ns}.svc`,
          ...superuser,
          database: 'postgres',
          caFile,
        },
        'postgres',
      );
      try {
        starts[member.name] = (await client.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    return starts;
  };
  /** The certificate a new client at this address is served, as openssl reads it. */
  const served = (address: string, port: number) => {
    const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(
      spawnSync('openssl', ['s_client', '-starttls', 'postgres', '-connect', `${address}:${port}`], { input: '', timeout: 15_000, encoding: 'utf8' }).stdout,
    )?.[0];
    return pem ? new X509Certificate(pem).fingerprint256 : undefined;
  };
  /** Runs `rotate` while both writers write, until each has committed `after` more once it is done. */
  const underWriters = async (rotate: () => Promise<void>) => {
    const pooled = startTlsWriter(await serviceTarget(names(name).poolerRwService, Ports.pooler), { workers: 2, reconnectEvery: 20, table: 'ticks' });
    const direct = startTlsWriter(await serviceTarget(`${name}-rw`, Ports.postgres), { workers: 1, reconnectEvery: 20, table: 'ticks' });
    try {
      await eventually('both writers committing', async () => pooled.result.commits > 20 && direct.result.commits > 20, 60_000);
      await rotate();
      // New connections after the rotation: each writer reconnects every 20 commits.
      const [p, d] = [pooled.result.commits, direct.result.commits];
      await eventually('more commits after the rotation', async () => pooled.result.commits > p + 100 && direct.result.commits > d + 50, 120_000);
    } finally {
      await Promise.all([pooled.stop(), direct.stop()]);
    }
    return { pooled: pooled.result, direct: direct.result };
  };
  const report = (what: string, writer: string, result: TlsWriterResult) =>
    process.stderr.write(
      `# ${what}, ${writer}: ${result.commits} commits over ${result.connections} connections, ${result.failures.length} failed${result.failures.length ? `: ${result.failures.slice(0, 5).join(' | ')}` : ''}\n`,
    );
  /** After a rotation: the Secret's certificate is served by every member, the pooler and its clients. */
  const assertServedEverywhere = async (writers: { pooled: TlsWriterResult; direct: TlsWriterResult }, cert: string) => {
    const fingerprint = new X509Certificate(cert).fingerprint256;
    for (const member of await members())
      await eventually(`${member.name} serves the new certificate`, async () => served(member.address, Ports.postgres) === fingerprint, 60_000);
    const poolers = await api.listPods(
      ns,
      selectorString((await api.core.readNamespacedService({ namespace: ns, name: names(name).poolerRwService })).spec!.selector!),
    );
    assert.ok(poolers.length > 0, 'a pooler pod');
    for (const pod of poolers)
      assert.equal(served(pod.status!.podIP!, Ports.pooler), fingerprint, `the pooler ${pod.metadata!.name!} serves the new certificate`);
    assert.equal(writers.pooled.lastServed, fingerprint, "the pooler's clients were served the new certificate");
    assert.equal(writers.direct.lastServed, fingerprint, "the direct writer's last connection was served the new certificate");
  };
  const rotateWithCtl = async (...extra: string[]) => {
    const result = await runCtl(['rotate-certificates', '-c', name, '-n', ns, '--kubeconfig', e2e.stack.kubeconfigPath, '--timeout', '900', ...extra]);
    process.stderr.write(`${result.stdout.trimEnd().replace(/^/gm, '# ctl: ')}\n`);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /pooler .* serves the new certificate/);
    return result.stdout;
  };
  const assertStreaming = () =>
    eventually(
      'the replica still streaming',
      async () => (await demo.query(`${name}-rw`, "SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'"))[0]?.n === 1,
      60_000,
    );

  before(async () => {
    e2e = await startE2eStack('rotation-e2e', { logger, ipPrefix: '127.0.71' });
    api = e2e.api;
    demo = clusterDriver(api, ns, name, viaClusterIp);
    await demo.create({ instances: 2, ha: { ttl: 10, loopWait: 2, retryTimeout: 4 }, pooler: { enabled: true, instances: 1 } });
    await demo.healthyWith(2, 180_000);
    await demo.readPassword();
    app = { user: await secretText(names(name).appSecret, 'username'), password: await secretText(names(name).appSecret, 'password') };
    superuser = { user: 'postgres', password: await secretText(names(name).superuserSecret, 'password') };
    caFile = join(e2e.dir, 'app-ca.crt');
    writeFileSync(caFile, await secretText(names(name).appSecret, 'ca.crt'));
    // As a kubelet refreshes a mounted Secret: the applications' CA file follows the app Secret.
    caSync = setInterval(() => {
      secretText(names(name).appSecret, 'ca.crt').then(
        (ca) => {
          if (ca && ca !== readFileSync(caFile, 'utf8')) writeFileSync(caFile, ca);
        },
        () => undefined,
      );
    }, 1000);
    const pooler = await serviceTarget(names(name).poolerRwService, Ports.pooler);
    await eventually(
      'the table, through the pooler over verify-full',
      async () => {
        const client = await connectVerified(pooler).catch(() => undefined);
        if (!client) return undefined;
        try {
          await client.query('CREATE TABLE IF NOT EXISTS ticks (id bigserial PRIMARY KEY, at timestamptz DEFAULT now())');
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      120_000,
    );
  });
  after(async () => {
    clearInterval(caSync);
    await e2e?.close();
  });

  it('a server certificate rotation: no failed transaction, no restart, the new certificate served everywhere', async () => {
    const starts = await postmasterStarts();
    const before = await secretText(names(name).serverTlsSecret, 'tls.crt');
    const writers = await underWriters(async () => {
      await rotateWithCtl();
    });
    report('server certificate rotation', 'through the pooler', writers.pooled);
    report('server certificate rotation', 'direct to -rw', writers.direct);
    const cert = await secretText(names(name).serverTlsSecret, 'tls.crt');
    assert.notEqual(cert, before, 'a new certificate');
    assert.deepEqual(writers.pooled.failures, [], 'no transaction through the pooler failed');
    assert.deepEqual(writers.direct.failures, [], 'no direct transaction failed');
    await assertServedEverywhere(writers, cert);
    assert.deepEqual(await postmasterStarts(), starts, 'no member restarted PostgreSQL');
    await assertStreaming();
  });

  it('a CA rotation (trust both, then sign with the new one): no failed transaction, no restart, the new certificate served everywhere', async () => {
    const starts = await postmasterStarts();
    const oldCa = pemCertificates(await secretText(names(name).caSecret, 'ca.crt'))[0]!;
    const writers = await underWriters(async () => {
      const output = await rotateWithCtl('--ca');
      assert.match(output, /a new CA \(serial [0-9A-F]+\) is trusted/);
    });
    report('CA rotation', 'through the pooler', writers.pooled);
    report('CA rotation', 'direct to -rw', writers.direct);
    const bundle = pemCertificates(await secretText(names(name).caSecret, 'ca.crt'));
    assert.notEqual(bundle[0], oldCa, 'another CA signs');
    assert.equal(bundle[1], oldCa, 'the previous CA stays trusted');
    const cert = await secretText(names(name).serverTlsSecret, 'tls.crt');
    assert.ok(new X509Certificate(cert).verify(new X509Certificate(bundle[0]!).publicKey), 'the server certificate is signed by the new CA');
    assert.deepEqual(pemCertificates(await secretText(names(name).appSecret, 'ca.crt')), bundle, "the app Secret's CA is the new bundle");
    assert.deepEqual(writers.pooled.failures, [], 'no transaction through the pooler failed');
    assert.deepEqual(writers.direct.failures, [], 'no direct transaction failed');
    await assertServedEverywhere(writers, cert);
    assert.deepEqual(await postmasterStarts(), starts, 'no member restarted PostgreSQL');
    await assertStreaming();
  });
});
