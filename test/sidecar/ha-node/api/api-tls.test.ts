import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Server as TlsServer } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { serve, type RunningServer } from '../../../../lib/http.js';
import { callUrl, type CallTls } from '../../../../lib/http-call.js';
import { createCertificateAuthority, issueCertificate, type PemPair } from '../../../../lib/tls-certificates.js';
import { ApiTls, type VerifyClient } from '../../../../sidecar/ha-node/api/api-tls.js';
import { createHaNodeApp } from '../../../../sidecar/ha-node/api/app.js';
import { createOpsModules } from '../../../../sidecar/ha-node/api/ops/index.js';
import { StartingHandler } from '../../../../sidecar/ha-node/api/starting.js';
import { httpProbe } from '../../../../local/node/probe-actions.js';
import { startTestApiServer, type TestApiServer } from '../../../support/kube.js';
import { dcsFor, quiet, snapshotFor } from '../ops/support.js';

/**
 * ha-node's REST API over HTTPS with the server Secret's files (api/api-tls.ts): verified by a
 * pod's name under the headless Service against the cluster CA, refused to clients trusting
 * another CA and to plain HTTP, a new certificate swapped into the same listener, a throwaway
 * certificate and a liveness answer while the files are missing, and verify_client on a
 * mutating endpoint.
 */
const podName = 'shop-0.shop-headless.default.svc';
const credentials = { username: 'api-user', password: 'api-password' };
const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;

interface Member {
  server: RunningServer;
  tls: ApiTls;
  url: string;
  dir: string;
}

describe('ha-node REST API over HTTPS with the server Secret', () => {
  let kube: TestApiServer;
  const clusterCa = createCertificateAuthority('shop.default.keelson.io');
  const clientCa = createCertificateAuthority('shop clients');
  const otherCa = createCertificateAuthority('someone else');
  const serverPair = (ca: PemPair = clusterCa) => issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: ['shop-rw', `*.shop-headless.default.svc`] });
  const members: Member[] = [];

  function writeFiles(dir: string, pair: PemPair): void {
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
    writeFileSync(join(dir, 'client-ca.crt'), clientCa.cert);
  }

  /** An API as run.ts serves it: the listener first, the app once the member is built. */
  async function startMember(options: { pair?: PemPair; verifyClient?: VerifyClient; app?: boolean } = {}): Promise<Member> {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-api-tls-'));
    if (options.pair) writeFiles(dir, options.pair);
    const verifyClient = options.verifyClient ?? 'none';
    const tls = new ApiTls({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: join(dir, 'client-ca.crt'), verifyClient }, quiet);
    const starting = new StartingHandler();
    const server = await serve(starting.handler, { host: '127.0.0.1', port: 0, logger: quiet, shutdownTimeoutMs: 500, tls: tls.serverOptions() });
    tls.follow(server.server as unknown as TlsServer, 60_000);
    if (options.app !== false) {
      const dcs = dcsFor(kube, 'shop', 'shop-0');
      const context = { snapshot: snapshotFor('shop-0', 'shop', dcs), dcs, logger: quiet, wake: () => undefined, credentials, verifyClient };
      starting.use(createHaNodeApp(context, createOpsModules()));
    }
    const member = { server, tls, url: `https://127.0.0.1:${server.port}`, dir };
    members.push(member);
    return member;
  }

  const trusting = (ca: PemPair, servername = podName): CallTls => ({ ca: ca.cert, servername });

  /** The certificate the listener presents now (a new connection). */
  function servedCertificate(member: Member): Promise<X509Certificate> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: member.server.port, rejectUnauthorized: false }, () => {
        const raw = socket.getPeerX509Certificate();
        socket.end();
        if (raw) resolve(raw);
        else reject(new Error('no certificate presented'));
      });
      socket.on('error', reject);
    });
  }

  before(async () => {
    kube = await startTestApiServer();
  });

  after(async () => {
    for (const m of members) {
      m.tls.stop();
      await m.server.close();
      rmSync(m.dir, { recursive: true, force: true });
    }
    await kube?.close();
  });

  it('a client verifying against the cluster CA by the pod name under the headless Service gets its answer', async () => {
    const member = await startMember({ pair: serverPair() });
    const answer = await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) });
    assert.equal(answer.status, 200);
  });

  it('a client trusting another CA, a name the certificate lacks, and plain HTTP are refused', async () => {
    const member = await startMember({ pair: serverPair() });
    await assert.rejects(callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(otherCa) }), /certificate/i);
    await assert.rejects(
      callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa, 'shop-0.other-headless.default.svc') }),
      /altnames|Hostname/i,
    );
    await assert.rejects(callUrl(`http://127.0.0.1:${member.server.port}/liveness`, { timeoutMs: 5000 }), /socket hang up|ECONNRESET|EPIPE/);
  });

  it('new files are swapped into the same listener: the new certificate is served, a broken update is not taken', async () => {
    const member = await startMember({ pair: serverPair() });
    const before = await servedCertificate(member);
    const renewed = serverPair();
    writeFiles(member.dir, renewed);
    member.tls.refresh();
    const after = await servedCertificate(member);
    assert.notEqual(after.serialNumber, before.serialNumber);
    assert.equal(after.fingerprint256, new X509Certificate(renewed.cert).fingerprint256);
    assert.equal((await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) })).status, 200);
    // A key that does not match its certificate (a Secret caught halfway): the renewed pair stays.
    writeFileSync(join(member.dir, 'tls.key'), serverPair().key);
    member.tls.refresh();
    assert.equal((await servedCertificate(member)).fingerprint256, after.fingerprint256);
    // A certificate from a new CA, once the client trusts both (the CA rotation's first step).
    const nextCa = createCertificateAuthority('shop.default.keelson.io next');
    writeFiles(member.dir, serverPair(nextCa));
    member.tls.refresh();
    const bundle = { ca: `${clusterCa.cert}${nextCa.cert}`, servername: podName };
    assert.equal((await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: bundle })).status, 200);
    await assert.rejects(callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) }), /certificate/i);
  });

  it('while the certificate is not there the listener answers liveness with a throwaway one, and takes the files once they come', async () => {
    const member = await startMember({ app: false });
    // As the kubelet probes: TLS without verification.
    assert.deepEqual(await httpProbe({ host: '127.0.0.1', port: member.server.port, path: '/liveness', https: true, headers: {}, timeoutMs: 5000 }), {
      ok: true,
      message: 'HTTP probe returned 200',
    });
    const readiness = await httpProbe({ host: '127.0.0.1', port: member.server.port, path: '/readiness', https: true, headers: {}, timeoutMs: 5000 });
    assert.equal(readiness.ok, false);
    assert.equal(member.tls.current(), undefined);
    await assert.rejects(callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) }), /certificate/i);
    writeFiles(member.dir, serverPair());
    member.tls.refresh();
    assert.equal((await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) })).status, 200);
  });

  it('verify_client optional: a mutating request needs a client certificate the client CA signed, besides the credentials; reads stay open', async () => {
    const member = await startMember({ pair: serverPair(), verifyClient: 'optional' });
    const client = issueCertificate(clientCa, 'operator', { usage: 'client' });
    const stranger = issueCertificate(otherCa, 'operator', { usage: 'client' });
    const patch = (tls: CallTls, headers: Record<string, string> = {}) =>
      callUrl(`${member.url}/config`, { method: 'PATCH', body: '{}', headers: { 'content-type': 'application/json', ...headers }, timeoutMs: 5000, tls });
    const none = await patch(trusting(clusterCa), { authorization: basic });
    assert.deepEqual([none.status, none.body], [403, 'client certificate required']);
    const foreign = await patch({ ...trusting(clusterCa), cert: stranger.cert, key: stranger.key }, { authorization: basic });
    assert.deepEqual([foreign.status, foreign.body], [403, 'client certificate required']);
    // A verified certificate passes the gate; the credentials are still asked for.
    const withoutCredentials = await patch({ ...trusting(clusterCa), cert: client.cert, key: client.key });
    assert.equal(withoutCredentials.status, 401);
    const read = await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) });
    assert.equal(read.status, 200);
  });

  it('verify_client required: a connection without a client certificate is refused at the handshake', async () => {
    const member = await startMember({ pair: serverPair(), verifyClient: 'required' });
    const client = issueCertificate(clientCa, 'operator', { usage: 'client' });
    await assert.rejects(callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: trusting(clusterCa) }), /certificate|socket hang up|ECONNRESET/i);
    const read = await callUrl(`${member.url}/liveness`, { timeoutMs: 5000, tls: { ...trusting(clusterCa), cert: client.cert, key: client.key } });
    assert.equal(read.status, 200);
  });
});
