import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { serve, type RunningServer } from '../../lib/http.js';
import { createLogger } from '../../lib/log.js';
import { createCertificateAuthority, issueCertificate } from '../../lib/tls-certificates.js';
import { callMember } from '../../ctl/client.js';
import { MemberNames, onceCa } from '../../ctl/member-tls.js';
import { serverCertificateHosts } from '../../operator/certificates/server-names.js';

/**
 * `keelson ctl` to a member's https API: the member's certificate (the operator's server
 * certificate) is checked by the name the member carries under the headless Service, learnt
 * from its api_url, against the cluster CA, which is read once and only for https calls.
 */
describe('keelson ctl verifies a member by its name under the headless Service', () => {
  const ca = createCertificateAuthority('demo.default.keelson.io');
  const other = createCertificateAuthority('another cluster');
  let server: RunningServer;
  let base: string;

  before(async () => {
    const pair = issueCertificate(ca, 'demo-rw', { usage: 'server', hosts: serverCertificateHosts('demo', 'default') });
    server = await serve((_req, res) => res.end('{"role":"primary"}'), {
      host: '127.0.0.1',
      port: 0,
      logger: createLogger({ name: 'ctl-tls', level: 'silent' }),
      tls: pair,
    });
    base = `https://127.0.0.1:${server.port}`;
  });

  after(() => server?.close());

  it('reaches a member known by name with the cluster CA; refuses another CA and a member it cannot name', async () => {
    const names = new MemberNames('demo', 'default');
    names.remember([{ name: 'demo-0', api_url: `${base}/ha` }]);
    assert.equal(names.serverName('127.0.0.1'), 'demo-0.demo-headless.default.svc');
    let reads = 0;
    const source = onceCa(async () => {
      reads += 1;
      return ca.cert;
    });
    const reply = await callMember(base, 'GET', '/ha', undefined, { timeoutMs: 5000, ca: source, names });
    assert.equal(reply.status, 200);
    await callMember(base, 'GET', '/ha', undefined, { timeoutMs: 5000, ca: source, names });
    assert.equal(reads, 1, 'the Secret is read once per run');
    await assert.rejects(callMember(base, 'GET', '/ha', undefined, { timeoutMs: 5000, ca: other.cert, names }), /certificate/i);
    // A member of another cluster's name (or none known): the address alone is not on the certificate.
    const strangers = new MemberNames('shop', 'default');
    strangers.remember([{ name: 'shop-0', api_url: `${base}/ha` }]);
    await assert.rejects(callMember(base, 'GET', '/ha', undefined, { timeoutMs: 5000, ca: ca.cert, names: strangers }), /altnames|Hostname|IP/i);
    await assert.rejects(callMember(base, 'GET', '/ha', undefined, { timeoutMs: 5000, ca: ca.cert }), /altnames|IP/i);
  });
});
