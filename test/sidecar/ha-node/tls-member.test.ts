import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { callMember, type ClientOptions } from '../../../ctl/client.js';
import { startCluster, type Member, type TestCluster } from './harness.js';

const user = 'tls-admin';
const password = 'tls-password';

/**
 * The REST API of real ha-node members served over HTTPS (KEELSON_API_CERTFILE/KEYFILE): reads
 * open, mutating endpoints refused without credentials, plain HTTP and unverified clients refused,
 * and member-to-member calls (the switchover's eligibility check, the race) over HTTPS too.
 */
describe('ha-node REST API over HTTPS', { timeout: 240_000 }, () => {
  let dir: string;
  let cluster: TestCluster;
  let trusted: ClientOptions;

  const base = (m: Member): string => `https://${m.ip}:${m.apiPort}`;
  const get = (m: Member, path: string) => callMember(base(m), 'GET', path, undefined, trusted);

  async function primary(): Promise<Member> {
    return cluster.waitFor(
      'a primary answering over HTTPS',
      async () => {
        const codes = await Promise.all(
          cluster.members.map((m) =>
            get(m, '/primary').then(
              (r) => r.status,
              () => 0,
            ),
          ),
        );
        return codes.filter((c) => c === 200).length === 1 ? cluster.members[codes.indexOf(200)] : undefined;
      },
      120_000,
    );
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-ha-tls-'));
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=keelson-test',
        '-addext',
        'subjectAltName=IP:127.0.0.2,IP:127.0.0.3',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    trusted = { ca: readFileSync(cert, 'utf8'), timeoutMs: 60_000, credentials: { username: user, password } };
    cluster = await startCluster({
      members: 2,
      scope: 'tls',
      // Members trust the cluster CA for their calls to each other (fetch reads NODE_EXTRA_CA_CERTS).
      env: { KEELSON_API_CERTFILE: cert, KEELSON_API_KEYFILE: key, NODE_EXTRA_CA_CERTS: cert, KEELSON_API_USERNAME: user, KEELSON_API_PASSWORD: password },
    });
  });

  after(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads are open, mutating endpoints need credentials; plain HTTP and unverified clients are refused', async () => {
    const leader = await primary();
    const doc = await get(leader, '/ha');
    assert.equal(doc.status, 200);
    assert.equal((JSON.parse(doc.text) as { role: string }).role, 'primary');
    const anonymous = await callMember(base(leader), 'POST', '/reload', undefined, { ...trusted, credentials: undefined });
    assert.deepEqual([anonymous.status, anonymous.text], [401, 'Authentication required']);
    const wrong = await callMember(base(leader), 'POST', '/reload', undefined, { ...trusted, credentials: { username: user, password: 'nope' } });
    assert.deepEqual([wrong.status, wrong.text], [401, 'Invalid credentials']);
    const allowed = await callMember(base(leader), 'POST', '/reload', undefined, trusted);
    assert.deepEqual([allowed.status, allowed.text], [202, 'reload scheduled']);
    await assert.rejects(
      callMember(`http://${leader.ip}:${leader.apiPort}`, 'GET', '/ha', undefined, { timeoutMs: 5000 }),
      /cannot reach|socket hang up|ECONNRESET/,
    );
    await assert.rejects(callMember(base(leader), 'GET', '/ha', undefined, { timeoutMs: 5000 }), /self[- ]signed certificate/i);
  });

  it('members reach each other over HTTPS: the published api_url is https and a switchover succeeds', async () => {
    const leader = await primary();
    const replica = cluster.members.find((m) => m !== leader)!;
    const members = await cluster.waitFor(
      'the replica streaming',
      async () => {
        const doc = JSON.parse((await get(leader, '/cluster')).text) as { members: Array<{ name: string; state: string; api_url: string }> };
        return doc.members.some((m) => m.name === replica.name && m.state === 'streaming') ? doc.members : undefined;
      },
      60_000,
    );
    for (const m of members) assert.match(m.api_url, /^https:\/\//, `${m.name} publishes an https api_url`);
    const r = await callMember(base(leader), 'POST', '/switchover', { leader: leader.name, candidate: replica.name }, trusted);
    assert.deepEqual([r.status, r.text], [200, `Successfully switched over to "${replica.name}"`]);
    assert.equal(await primary(), replica);
  });
});
