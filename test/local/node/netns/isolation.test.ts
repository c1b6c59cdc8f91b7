import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isolationProblems, readNetworkFacts, type NetworkFacts } from '../../../../local/node/netns/isolation.js';
import { isPrivatePrefix, nodeSubnet, podMacAddress, podNamespaceName, vethName } from '../../../../local/node/netns/subnet.js';
import { cutRules } from '../../../../local/node/netns/partition.js';

const isolated = (): NetworkFacts => ({
  isHostNamespace: false,
  routes: [
    { dst: '10.213.0.0/24', dev: 'keelson0' },
    { dst: '127.0.0.0/8', dev: 'lo', table: 'local' },
  ],
  links: [
    { ifname: 'lo', link_type: 'loopback' },
    { ifname: 'keelson0', link_type: 'ether', linkinfo: { info_kind: 'bridge' } },
    { ifname: 'kvabc123-2', link_type: 'ether', link_netnsid: 0, linkinfo: { info_kind: 'veth' } },
  ],
  peerNames: new Map([[0, 'keelson-abc123-2']]),
  hostAliases: new Set(),
});

describe('isolation check', () => {
  it('accepts lo, the bridge and veths into pod namespaces', () => {
    assert.deepEqual(isolationProblems(isolated()), []);
  });

  it('refuses a default route, a gateway, the host namespace and foreign links', () => {
    const facts = isolated();
    facts.routes.push({ dst: 'default', gateway: '192.0.2.1', dev: 'eth0' }, { dst: '198.51.100.0/24', gateway: '10.213.0.9' });
    facts.links.push({ ifname: 'eth0', link_type: 'ether' }, { ifname: 'kvabc123-3', link_netnsid: 1, linkinfo: { info_kind: 'veth' } });
    facts.isHostNamespace = true;
    const problems = isolationProblems(facts);
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.match(problems.join('\n'), /host's network namespace/);
    assert.match(problems.join('\n'), /default route on eth0/);
    assert.match(problems.join('\n'), /198\.51\.100\.0\/24 through a gateway/);
    assert.match(problems.join('\n'), /link eth0/);
    assert.match(problems.join('\n'), /veth kvabc123-3 leads to an unnamed namespace/);
  });

  it('refuses a veth into a namespace that is the host one under a pod-like name', () => {
    const facts = isolated();
    facts.hostAliases.add('keelson-abc123-2');
    assert.match(isolationProblems(facts).join('\n'), /leads to namespace keelson-abc123-2/);
  });

  it("finds the host's own namespace not isolated (reads tables, sends nothing)", async () => {
    const problems = isolationProblems(await readNetworkFacts());
    // This machine's namespace has a way out (a default route, a link such as eth0): never isolated.
    assert.ok(problems.length > 0 && problems.some((p) => /default route|link |host's network namespace/.test(p)), problems.join('\n'));
  });
});

describe('address plan', () => {
  it('takes only private /24s and names pod namespaces and veths within the kernel limits', () => {
    assert.ok(isPrivatePrefix('10.213.0') && isPrivatePrefix('172.31.4') && isPrivatePrefix('192.168.9'));
    assert.ok(!isPrivatePrefix('127.0.0') && !isPrivatePrefix('172.32.0') && !isPrivatePrefix('8.8.8') && !isPrivatePrefix('10.0'));
    assert.throws(() => nodeSubnet('127.0.0'), /invalid pod network "127.0.0"/);
    const subnet = nodeSubnet('10.9.8');
    assert.deepEqual([subnet.nodeAddress, subnet.apiAddress], ['10.9.8.1', '10.9.8.254']);
    assert.equal(podNamespaceName('abc123', '10.9.8.199'), 'keelson-abc123-199');
    assert.ok(vethName('abc123', '10.9.8.199').length <= 15);
  });

  it('gives a pod a locally administered unicast MAC that follows from its address alone', () => {
    assert.equal(podMacAddress('10.213.40.3'), '0a:58:0a:d5:28:03');
    assert.equal(podMacAddress('192.168.9.254'), podMacAddress('192.168.9.254'), 'the same address, the same MAC (a replacement pod keeps it)');
    assert.notEqual(podMacAddress('10.213.40.3'), podMacAddress('10.213.40.4'));
    const first = parseInt(podMacAddress('172.31.4.2').slice(0, 2), 16);
    assert.equal(first & 0b11, 0b10, 'locally administered, not multicast');
  });

  it('writes partition rules that drop both directions and replace the previous cut', () => {
    const rules = cutRules({ kind: 'addresses', addresses: ['10.9.8.254'] });
    assert.match(rules, /delete table inet keelson_partition/);
    assert.match(rules, /ip daddr \{ 10\.9\.8\.254 \} drop/);
    assert.match(rules, /ip saddr \{ 10\.9\.8\.254 \} drop/);
    assert.match(cutRules({ kind: 'everything' }), /oifname "eth0" drop[\s\S]*iifname "eth0" drop/);
  });
});
