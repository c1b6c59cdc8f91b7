import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { ensureCertificates } from '../../../operator/certificates/ensure.js';
import { desiredDynamicConfig } from '../../../operator/builders/dynamic-config.js';
import { haNodeConfig } from '../../../operator/builders/configmap.js';
import { tlsMounts, tlsVolumes } from '../../../operator/builders/tls-volumes.js';
import { EventRecorder } from '../../../operator/events.js';
import { OperatorKubeApi } from '../../../operator/kube-api.js';
import { ensureSourceTlsSecret, sourceTlsData } from '../../../operator/reconcile/source-tls.js';
import { validateDynamicConfig } from '../../../sidecar/ha-node/ops/config-validate.js';
import { standbySourceProblems } from '../../../sidecar/ha-node/postgres/standby-source.js';
import { startCrdApiServer, type CrdApiServer } from '../crd-api-server.js';
import { sampleCluster } from '../fixtures.js';

/**
 * A standby cluster of a DatabaseCluster gets the source's replication client Secret as
 * `<cluster>-source-tls` (against the stand-in's API server), every pod mounts it as an optional
 * volume, and standby_cluster names the source's -rw Service as the name its certificate carries.
 */
describe("a standby cluster's copy of its source's replication certificate", { timeout: 60_000 }, () => {
  let stand: CrdApiServer;
  let api: OperatorKubeApi;
  const ns = 'default';
  const logger = createLogger({ name: 'source-tls', level: 'silent' });

  before(async () => {
    stand = await startCrdApiServer(logger, ns);
    api = stand.api;
  });
  after(async () => {
    await stand?.close();
  });
  const createCluster = (name: string, extra?: Record<string, unknown>) => stand.createCluster(name, extra);

  it('copies the source Secret once, follows its renewal, and writes nothing while it is the same', async () => {
    const writes: string[] = [];
    const deps = { api, events: new EventRecorder(api.core, logger), recordWrite: (kind: string, verb: string) => writes.push(`${verb} ${kind}`) };
    const src = { cluster: await createCluster('src'), operatorVersion: '1.0.0' };
    const stb = { cluster: await createCluster('stb', { replica: { source: { cluster: 'src' } } }), operatorVersion: '1.0.0' };
    await ensureCertificates(deps, src);
    const read = (name: string) => api.core.readNamespacedSecret({ namespace: ns, name });
    const source = sourceTlsData(await read('src-replication-tls'));
    assert.ok(source, 'the source has a certificate, a key and its CA');
    writes.length = 0;
    await ensureSourceTlsSecret(deps, stb, source);
    const copy = await read('stb-source-tls');
    assert.deepEqual(copy.data, source);
    assert.equal(copy.metadata?.ownerReferences?.[0]?.name, 'stb', 'removed with the standby cluster');
    await ensureSourceTlsSecret(deps, stb, source);
    assert.deepEqual(writes, ['create Secret'], 'no write while the source is unchanged');
    const renewed = { ...source, 'tls.crt': Buffer.from('renewed').toString('base64') };
    await ensureSourceTlsSecret(deps, stb, renewed);
    assert.equal((await read('stb-source-tls')).data?.['tls.crt'], renewed['tls.crt'], 'a renewal reaches the copy');
    assert.equal(sourceTlsData({ data: { 'tls.crt': 'x', 'tls.key': 'y' } }), undefined, 'nothing to copy without the CA');
  });

  it("mounts it as an optional volume and names the source's -rw Service in standby_cluster", () => {
    const ctx = { cluster: sampleCluster({}, 'stb'), operatorVersion: '1.0.0' };
    const volume = tlsVolumes(ctx).find((v) => v.secret?.secretName === 'stb-source-tls');
    assert.equal(volume?.secret?.optional, true, 'optional: a cluster that is no standby has no copy, and becoming one rolls nothing');
    assert.ok(tlsMounts().some((m) => m.name === volume?.name && m.mountPath === '/etc/keelson-tls/source'));
    assert.equal(haNodeConfig(ctx).sourceTlsDir, '/etc/keelson-tls/source');
    const desired = desiredDynamicConfig(ctx.cluster, { host: '10.96.0.7', port: 5432, serverName: 'src-rw.default.svc' });
    assert.deepEqual(desired.standby_cluster, { host: '10.96.0.7', port: 5432, server_name: 'src-rw.default.svc' });
    assert.deepEqual(validateDynamicConfig(desired as never), [], 'ha-node takes it');
    assert.match(standbySourceProblems({ host: '10.96.0.7', server_name: 'Not A Name' })[0]?.message ?? '', /must be a DNS name/);
  });
});
