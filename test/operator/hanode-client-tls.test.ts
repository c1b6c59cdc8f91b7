import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { serve, type RunningServer } from '../../lib/http.js';
import { createLogger } from '../../lib/log.js';
import { createCertificateAuthority, issueCertificate } from '../../lib/tls-certificates.js';
import { buildStatefulSet } from '../../operator/builders/statefulset.js';
import { serverCertificateHosts } from '../../operator/certificates/server-names.js';
import { HaNodeClient } from '../../operator/hanode-client.js';
import { haNodeTargets } from '../../operator/reconcile/api-tls.js';
import { sampleContext } from './fixtures.js';

/**
 * The operator's calls to ha-node: HTTPS to the pod's address, the certificate checked against
 * the cluster CA by the pod's name under the headless Service (the server certificate as the
 * operator issues it); refused when the CA or the name differs; plain HTTP only to a pod whose
 * probes are not HTTPS (a pod from before TLS, until the roll replaces it).
 */
const logger = createLogger({ name: 'hanode-client-tls', level: 'silent' });
const clusterDocument = JSON.stringify({ members: [{ name: 'demo-0', role: 'leader' }] });

function answer(_req: unknown, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(clusterDocument);
}

/** A pod of the StatefulSet the operator builds, with an address. */
function podOf(name: string, ip: string, template = buildStatefulSet(sampleContext()).spec!.template): V1Pod {
  return { metadata: { name, namespace: 'default' }, spec: template.spec!, status: { podIP: ip } };
}

describe('the operator calls ha-node over HTTPS, verifying the pod by its name', () => {
  const ca = createCertificateAuthority('demo.default.keelson.io');
  const other = createCertificateAuthority('another cluster');
  let https: RunningServer;
  let plain: Server;

  before(async () => {
    const pair = issueCertificate(ca, 'demo-rw', { usage: 'server', hosts: serverCertificateHosts('demo', 'default') });
    https = await serve(answer, { host: '127.0.0.1', port: 0, logger, tls: { ...pair } });
    plain = createServer(answer);
    await new Promise<void>((resolve) => plain.listen(https.port, '127.0.0.2', resolve));
  });

  after(async () => {
    await https?.close();
    await new Promise((resolve) => plain?.close(resolve));
  });

  it('reaches a pod whose probes are HTTPS, trusting the cluster CA, by its name', async () => {
    const client = new HaNodeClient(5000, https.port);
    const pod = podOf('demo-0', '127.0.0.1');
    const [target] = haNodeTargets('demo', 'default', [pod], ca.cert);
    assert.deepEqual(target, { host: '127.0.0.1', https: true, serverName: 'demo-0.demo-headless.default.svc', ca: ca.cert });
    client.useTargets([target!]);
    assert.deepEqual(
      (await client.cluster('127.0.0.1')).map((m) => m.name),
      ['demo-0'],
    );
  });

  it('refuses a certificate the CA did not sign, one without the pod name, and a host it was never told about', async () => {
    const otherCa = new HaNodeClient(5000, https.port);
    otherCa.useTargets(haNodeTargets('demo', 'default', [podOf('demo-0', '127.0.0.1')], other.cert));
    await assert.rejects(otherCa.cluster('127.0.0.1'), /certificate/i);
    const otherCluster = new HaNodeClient(5000, https.port);
    otherCluster.useTargets(haNodeTargets('shop', 'default', [podOf('shop-0', '127.0.0.1')], ca.cert));
    await assert.rejects(otherCluster.cluster('127.0.0.1'), /altnames|Hostname/i);
    await assert.rejects(new HaNodeClient(5000, https.port).cluster('127.0.0.1'), /certificate/i);
  });

  it('calls a pod from before TLS (HTTP probes) over HTTP', async () => {
    const template = buildStatefulSet(sampleContext()).spec!.template;
    const old = structuredClone(template);
    for (const container of old.spec!.containers) {
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) if (probe?.httpGet) delete probe.httpGet.scheme;
    }
    const client = new HaNodeClient(5000, (plain.address() as AddressInfo).port);
    const [target] = haNodeTargets('demo', 'default', [podOf('demo-1', '127.0.0.2', old)], ca.cert);
    assert.equal(target!.https, false);
    client.useTargets([target!]);
    assert.equal((await client.cluster('127.0.0.2'))[0]!.name, 'demo-0');
  });
});
