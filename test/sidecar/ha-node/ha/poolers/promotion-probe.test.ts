import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority } from '../../../../../lib/tls-certificates.js';
import type { ClusterView, MemberRecord } from '../../../../../sidecar/ha-node/dcs/types.js';
import type { LoopContext } from '../../../../../sidecar/ha-node/ha/loop-context.js';
import { PromotionProbe } from '../../../../../sidecar/ha-node/ha/poolers/promotion-probe.js';
import type { PeerTlsSettings } from '../../../../../sidecar/ha-node/postgres/peer-tls.js';
import type { TestPostgres } from '../../../../support/postgres.js';
import { shopPeerSuffix, startTlsPostgres } from '../../../../support/tls-postgres.js';

/**
 * The old primary's probe of the new leader during a switchover, against a real PostgreSQL 15
 * that refuses TCP sessions without TLS: with the members' TLS settings it verifies the peer's
 * certificate by its name under the headless Service and sees the promotion.
 */
describe('promotion probe over verify-full TLS', { timeout: 60_000 }, () => {
  let pg: TestPostgres;
  const ca = createCertificateAuthority('shop.default.keelson.io');
  let peerTls: PeerTlsSettings;
  let strangerTls: PeerTlsSettings;

  /** What the probe reads of the loop: the DCS watch cache naming shop-0 leader at the test server, this member's name and PostgreSQL settings. */
  const probeWith = (tls: PeerTlsSettings | undefined): PromotionProbe => {
    const leader = { name: 'shop-0', host: pg.host, port: pg.port } as MemberRecord;
    const cluster = { leader: { holder: 'shop-0', ttl: 30, transitions: 0 }, history: [], members: [leader] } as ClusterView;
    const settings = { superuser: { username: pg.superuser, password: pg.password }, ...(tls ? { peerTls: tls } : {}) };
    const ctx = { dcs: { cachedCluster: () => cluster }, options: { name: 'shop-1' }, pg: { settings } };
    return new PromotionProbe(ctx as unknown as LoopContext);
  };
  const promoted = async (tls: PeerTlsSettings | undefined) => {
    const probe = probeWith(tls);
    try {
      return await probe.promotedLeader();
    } finally {
      await probe.close();
    }
  };

  before(async () => {
    pg = await startTlsPostgres(ca, { tlsOnly: true });
    writeFileSync(join(pg.baseDir, 'ca.crt'), ca.cert);
    writeFileSync(join(pg.baseDir, 'stranger.crt'), createCertificateAuthority('stranger').cert);
    peerTls = { rootCert: join(pg.baseDir, 'ca.crt'), hostSuffix: shopPeerSuffix };
    strangerTls = { ...peerTls, rootCert: join(pg.baseDir, 'stranger.crt') };
  });
  after(async () => {
    await pg?.stop();
  });

  it('sees the new leader take writes over TLS, verifying its certificate', async () => {
    assert.deepEqual(await promoted(peerTls), { host: pg.host, port: pg.port });
  });

  it('never reaches a peer whose certificate another CA signed or that another name carries', async () => {
    assert.equal(await promoted(strangerTls), undefined);
    assert.equal(await promoted({ ...peerTls, hostSuffix: 'other-headless.default.svc' }), undefined);
  });

  it('without TLS settings its plaintext session is refused by a server that requires TLS', async () => {
    assert.equal(await promoted(undefined), undefined);
  });
});
