/**
 * Pod namespaces for real (as root), inside an isolated namespace: the node namespace has no
 * route out, pods reach each other and the node, the host's namespace holds nothing of the pod
 * network (checked by reading its tables, never by sending), partitions cut and heal, and a
 * crashed run's namespaces are removed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ip, ipJson, runTool } from '../../../../local/node/netns/commands.js';
import { assertIsolated, isolationProblems, readNetworkFacts } from '../../../../local/node/netns/isolation.js';
import { ensureNodeNetwork } from '../../../../local/node/netns/node-network.js';
import { cutFromApiServer, cutFromEverything, cutFromPeers, heal } from '../../../../local/node/netns/partition.js';
import { PodNetworks, type PodNamespace } from '../../../../local/node/netns/pod-network.js';
import { nodeSubnet, podNamespaceName, serviceCidrOfSubnet } from '../../../../local/node/netns/subnet.js';
import { hostPidVariable } from '../../../../local/node/netns/isolated-run.js';
import { enterIsolatedRun } from '../../../support/netns.js';
import { acceptsConnection } from '../../../support/ports.js';

const inside = await enterIsolatedRun(import.meta.url, 120_000);

/** Whether host:port accepts a TCP connection, tried from this (node) namespace. */
const reachable = (host: string, port: number, timeoutMs = 1500): Promise<boolean> => acceptsConnection(host, port, timeoutMs);

/** The same, tried from inside a pod's namespace. */
async function reachableFrom(pod: PodNamespace, host: string, port: number): Promise<boolean> {
  const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port},timeout:1500});s.on('connect',()=>process.exit(0));s.on('timeout',()=>process.exit(1));s.on('error',()=>process.exit(1));`;
  return runTool(['nsenter', `--net=${pod.path}`, process.execPath, '-e', script]).then(
    () => true,
    () => false,
  );
}

/** A TCP listener on address:port, in the pod's namespace when given. */
async function listen(address: string, port: number, pod?: PodNamespace): Promise<ChildProcess> {
  const script = `require('net').createServer((s)=>s.end()).listen(${port},${JSON.stringify(address)},()=>console.log('up'))`;
  const argv = pod ? ['nsenter', `--net=${pod.path}`, process.execPath, '-e', script] : [process.execPath, '-e', script];
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`listener exited with ${code}`)));
  });
  return child;
}

if (inside) {
  describe('pods in network namespaces', { timeout: 100_000 }, () => {
    const subnet = nodeSubnet('10.213.7');
    const networks = new PodNetworks('t3st01', subnet);
    const listeners: ChildProcess[] = [];
    let a: PodNamespace;
    let b: PodNamespace;

    before(async () => {
      await ensureNodeNetwork(subnet);
      a = await networks.attach('10.213.7.2');
      b = await networks.attach('10.213.7.3');
      listeners.push(await listen(a.podIP, 7000, a), await listen(b.podIP, 7000, b), await listen(subnet.apiAddress, 7001));
    });

    after(async () => {
      for (const child of listeners) child.kill('SIGKILL');
      await networks.detach('10.213.7.2');
      await networks.detach('10.213.7.3');
    });

    it('keeps the node namespace without a route out while pods are attached', async () => {
      const facts = await readNetworkFacts();
      assert.deepEqual(isolationProblems(facts), []);
      assert.ok(!facts.routes.some((r) => r.dst === 'default'));
      await assertIsolated();
      const podRoutes = await ipJson<{ dst?: string; gateway?: string }>(['route', 'show', 'table', 'all'], a.name);
      assert.ok(!podRoutes.some((r) => r.dst === 'default'), 'a pod has no default route either');
      // Its one route through a gateway is to the Service range, through the node's own address.
      const viaGateway = podRoutes.filter((r) => r.gateway);
      assert.deepEqual(
        viaGateway.map((r) => [r.dst, r.gateway]),
        viaGateway.length === 0 ? [] : [[serviceCidrOfSubnet(subnet), subnet.nodeAddress]],
        'a pod routes through a gateway only to the Service range',
      );
    });

    it('reaches a pod from the node namespace and from another pod; pods reach the API address', async () => {
      assert.equal(await reachable(a.podIP, 7000), true);
      assert.equal(await reachableFrom(b, a.podIP, 7000), true);
      assert.equal(await reachableFrom(a, subnet.apiAddress, 7001), true);
      // Inside a pod, 127.0.0.1 is the pod itself: the node's listener on the API address is not there.
      assert.equal(await reachableFrom(a, '127.0.0.1', 7001), false);
    });

    it("leaves nothing of the pod network in the host's namespace (read, not sent to)", async () => {
      const hostNet = `--net=/proc/${process.env[hostPidVariable]}/ns/net`;
      const hostAddresses = await runTool(['nsenter', hostNet, 'ip', '-j', 'addr', 'show']);
      assert.ok(!hostAddresses.includes('"10.213.7.'), 'no pod or node address is configured on the host');
      const hostLinks = await runTool(['nsenter', hostNet, 'ip', '-j', 'link', 'show']);
      assert.match(hostLinks, /"lo"/, 'the tables read are those of the starting namespace');
      // A route lookup (nothing is sent): on the host the pod address is nobody's here, so any packet to it would leave.
      const [lookup] = JSON.parse(await runTool(['nsenter', hostNet, 'ip', '-j', 'route', 'get', a.podIP])) as Array<{ type?: string; dev?: string }>;
      assert.notEqual(lookup?.type, 'local');
      assert.ok(!/^(keelson0|kv)/.test(lookup?.dev ?? ''), `the host routes ${a.podIP} via ${lookup?.dev}, not into the node namespace`);
      assert.ok(!/"keelson0"|"kvt3st01/.test(hostLinks), 'neither the bridge nor a pod veth is on the host');
      const ours = await readNetworkFacts();
      assert.ok(!ours.isHostNamespace);
      assert.notEqual(process.env.KEELSON_HOST_NETNS, undefined);
    });

    it('cuts a pod from the API server only, from its peers, from everything, and heals', async () => {
      await cutFromApiServer(a.path, subnet);
      assert.equal(await reachableFrom(a, subnet.apiAddress, 7001), false, 'API cut');
      assert.equal(await reachableFrom(a, b.podIP, 7000), true, 'peers still reachable');
      assert.equal(await reachable(a.podIP, 7000), true, 'the node (probes) still reaches the pod');

      await cutFromPeers(a.path, [b.podIP]);
      assert.equal(await reachableFrom(a, subnet.apiAddress, 7001), true, 'a new cut replaces the old one');
      assert.equal(await reachableFrom(a, b.podIP, 7000), false, 'peer cut, one way');
      assert.equal(await reachableFrom(b, a.podIP, 7000), false, 'peer cut, the other way');

      await cutFromEverything(a.path);
      assert.equal(await reachable(a.podIP, 7000), false, 'full cut: not even the node');
      assert.equal(await reachableFrom(a, subnet.apiAddress, 7001), false);
      assert.equal(await reachableFrom(a, a.podIP, 7000), true, 'the pod still reaches itself');

      await heal(a.path);
      await heal(a.path); // healing twice is harmless
      assert.equal(await reachable(a.podIP, 7000), true);
      assert.equal(await reachableFrom(a, b.podIP, 7000), true);
      assert.equal(await reachableFrom(a, subnet.apiAddress, 7001), true);
    });

    it('attaches a pod again on the same address at once, even while a process lingers in the old namespace', async () => {
      // `ip netns del` alone leaves the veth to the kernel's later cleanup (never while a process is
      // inside), and the replacement pod's `ip link add` found the name taken.
      const address = '10.213.7.20';
      for (let round = 0; round < 5; round++) {
        const first = await networks.attach(address);
        const lingering = await listen(first.podIP, 7000, first);
        await networks.detach(address);
        const again = await networks.attach(address);
        const replacement = await listen(again.podIP, 7000, again);
        assert.equal(await reachable(address, 7000), true, `round ${round}: the replacement pod is reachable`);
        for (const child of [lingering, replacement]) child.kill('SIGKILL');
        await networks.detach(address);
      }
    });

    it("removes a crashed run's namespaces: its own node's, and others' that lost their veth", async () => {
      await ip(['netns', 'add', podNamespaceName('t3st01', '10.213.7.150')]);
      await ip(['netns', 'add', podNamespaceName('zz9999', '10.213.7.151')]);
      const removed = await networks.removeLeftovers();
      assert.ok(removed.includes('keelson-t3st01-150'));
      assert.ok(removed.includes('keelson-zz9999-151'));
      const names = (await ipJson<{ name: string }>(['netns', 'list'])).map((n) => n.name);
      assert.ok(!names.includes('keelson-t3st01-150') && !names.includes('keelson-zz9999-151'));
      // Live pods of this node are not leftovers of another node: a and b have their veths.
      const other = new PodNetworks('other9', subnet);
      assert.deepEqual(
        (await other.removeLeftovers()).filter((n) => n === a.name || n === b.name),
        [],
      );
    });
  });
}
