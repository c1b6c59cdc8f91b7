/** The member proxy's allow-list: CONNECT only to pod addresses of the node's /24, and the host kubeconfig that names it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memberProxyExtension } from '../../../../lib/kube/kubeconfig-extensions.js';
import { yaml } from '../../../../lib/yaml.js';
import { hostKubeconfigText } from '../../../../local/cluster/up-namespace.js';
import { tunnelTarget } from '../../../../local/node/netns/member-proxy.js';
import { nodeSubnet } from '../../../../local/node/netns/subnet.js';

describe('member proxy', () => {
  const subnet = nodeSubnet('10.213.0');

  it('tunnels to pod addresses only', () => {
    assert.deepEqual(tunnelTarget('10.213.0.5:8008', subnet), { host: '10.213.0.5', port: 8008 });
    assert.deepEqual(tunnelTarget('10.213.0.2:5432', subnet), { host: '10.213.0.2', port: 5432 });
    for (const [authority, why] of [
      ['10.213.0.254:6443', /not a pod address/], // the API server
      ['10.213.0.1:22', /not a pod address/], // the node itself
      ['10.213.1.7:5432', /not a pod address/], // a Service address
      ['192.168.1.1:80', /not a pod address/],
      ['10.213.0.5:0', /out of range/],
      ['10.213.0.5:70000', /out of range/],
      ['example.com:443', /needs podIP:port/],
      [undefined, /needs podIP:port/],
    ] as const) {
      const target = tunnelTarget(authority, subnet);
      assert.ok('refused' in target && why.test(target.refused), `${authority}: ${JSON.stringify(target)}`);
    }
  });

  it('the host kubeconfig points at the API forwarder and names the member proxy forwarder', () => {
    const admin =
      'apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: https://10.213.0.254:6443\n    certificate-authority-data: QUJD\ncontexts: []\nusers: []\n';
    const doc = yaml().parse(hostKubeconfigText(admin, { api: 4001, members: 4002 })) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    assert.equal(doc.clusters[0]!.cluster.server, 'https://127.0.0.1:4001');
    assert.equal(doc.clusters[0]!.cluster['certificate-authority-data'], 'QUJD');
    assert.deepEqual(doc.clusters[0]!.cluster.extensions, [{ name: memberProxyExtension, extension: { url: 'http://127.0.0.1:4002' } }]);
  });
});
