import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve, type RunningServer } from '../../../../lib/http.js';
import { createCertificateAuthority, issueCertificate } from '../../../../lib/tls-certificates.js';
import { confirmFailsafe } from '../../../../sidecar/ha-node/ha/duties/failsafe-client.js';
import { askPeer } from '../../../../sidecar/ha-node/ha/election/peers.js';
import { memberRecord, quiet } from '../ops/support.js';

/**
 * A member asking another member's HTTPS API (the race, the eligibility check, failsafe): the
 * peer's certificate is checked against the server CA file by the peer's name under the headless
 * Service while its address is dialled; another CA or another cluster's name makes the peer
 * unreachable, never trusted.
 */
describe("a member verifies its peers' HTTPS APIs by name against the cluster CA", () => {
  const ca = createCertificateAuthority('shop.default.keelson.io');
  const other = createCertificateAuthority('another cluster');
  const suffix = 'shop-headless.default.svc';
  let server: RunningServer;
  let dir: string;
  const requests: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-peer-api-'));
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'other.crt'), other.cert);
    const pair = issueCertificate(ca, 'shop-rw', { usage: 'server', hosts: [`*.${suffix}`] });
    server = await serve(
      (req, res) => {
        requests.push(`${req.method} ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ role: 'replica', state: 'running', timeline: 3, xlog: { received_location: 7, replayed_location: 7 } }));
      },
      { host: '127.0.0.1', port: 0, logger: quiet, tls: pair },
    );
  });

  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks a peer whose certificate carries its name and chains to the CA', async () => {
    const peer = memberRecord('shop-1', `${server.url}/ha`);
    const report = await askPeer(peer, 5000, { caFile: join(dir, 'ca.crt'), hostSuffix: suffix });
    assert.deepEqual([report.reachable, report.role, report.timeline, report.walPosition], [true, 'replica', 3, 7]);
  });

  it('counts a peer as unreachable under another CA, another name, or without the CA', async () => {
    const peer = memberRecord('shop-1', `${server.url}/ha`);
    assert.equal((await askPeer(peer, 5000, { caFile: join(dir, 'other.crt'), hostSuffix: suffix })).reachable, false);
    assert.equal((await askPeer(peer, 5000, { caFile: join(dir, 'ca.crt'), hostSuffix: 'web-headless.default.svc' })).reachable, false);
    assert.equal((await askPeer(peer, 5000)).reachable, false);
  });

  it('confirms failsafe over HTTPS with the same checks', async () => {
    const cluster = { members: [memberRecord('shop-1', `${server.url}/ha`)] } as unknown as Parameters<typeof confirmFailsafe>[0];
    const self = { name: 'shop-0', api_url: 'https://127.0.0.9:8008/ha', conn_url: '' };
    const before = requests.length;
    assert.equal(await confirmFailsafe(cluster, self, { tls: { caFile: join(dir, 'ca.crt'), hostSuffix: suffix } }), true);
    assert.deepEqual(requests.slice(before), ['POST /failsafe']);
    assert.equal(await confirmFailsafe(cluster, self, { tls: { caFile: join(dir, 'other.crt'), hostSuffix: suffix } }), false);
  });
});
