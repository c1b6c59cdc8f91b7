/**
 * How ctl reaches members: through the kubeconfig's member proxy (a real CONNECT proxy on
 * 127.0.0.1 here, tunnelling to a real HTTP server on loopback), directly, or not at all: a
 * kubeconfig whose API server is on loopback with no member proxy refuses non-loopback member
 * addresses from the host's namespace before anything is sent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inHostNetworkNamespace } from '../../lib/host-network.js';
import { callMember } from '../../ctl/client.js';
import { checkDirect, decideRoute, MemberAddressRefused, memberEndpoint, resolveMemberRoute } from '../../ctl/member-route.js';

function kubeconfig(dir: string, server: string, proxyUrl?: string): string {
  const path = join(dir, `kc-${Math.random().toString(36).slice(2)}`);
  const extensions = proxyUrl ? `\n    extensions:\n    - name: keelson.io/member-proxy\n      extension:\n        url: ${proxyUrl}` : '';
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server}${extensions}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user: {token: t}\n`,
  );
  return path;
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('ctl member route', () => {
  let dir: string;
  let member: Server;
  let memberPort: number;
  let proxy: Server;
  let proxyPort: number;
  const tunnels: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-ctl-route-'));
    member = createServer((req, res) => res.end(JSON.stringify({ path: req.url, method: req.method })));
    memberPort = await listen(member);
    // A CONNECT proxy that records what it was asked for and tunnels to the member whatever the
    // address asked: a call that bypassed it would dial that address itself and find nothing.
    proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, client) => {
      tunnels.push(req.url ?? '');
      const upstream = connect(memberPort, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
    });
    proxyPort = await listen(proxy);
  });

  after(() => {
    member.close();
    proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('decides: a proxy when named; refusal for a loopback API server seen from the host; direct otherwise', () => {
    assert.deepEqual(decideRoute({ proxy: { url: 'http://127.0.0.1:4567' }, apiServer: 'https://127.0.0.1:1', inHostNamespace: true }), {
      proxy: { host: '127.0.0.1', port: 4567 },
    });
    assert.match(
      decideRoute({ apiServer: 'https://127.0.0.1:6443', inHostNamespace: true }).refuseNonLoopback ?? '',
      /API server is on this machine \(127\.0\.0\.1\)/,
    );
    assert.deepEqual(
      decideRoute({ apiServer: 'https://127.0.0.1:6443', inHostNamespace: false }),
      {},
      'inside a namespace of its own ctl may send to its pods',
    );
    assert.deepEqual(
      decideRoute({ apiServer: 'https://10.96.0.1:443', inHostNamespace: true }),
      {},
      'a remote cluster (in a pod: the kubernetes Service) is reached directly',
    );
    assert.throws(
      () => decideRoute({ proxy: { url: 'http://10.0.0.1:80' }, inHostNamespace: true }),
      /must be \{ url: http:\/\/127/,
      'a member proxy off loopback is refused',
    );
    assert.throws(() => decideRoute({ proxy: 'nonsense', inHostNamespace: true }), /keelson\.io\/member-proxy/);
  });

  it('refuses a private member address before connecting, and lets loopback ones through', () => {
    const route = decideRoute({ apiServer: 'https://127.0.0.1:6443', inHostNamespace: true });
    assert.throws(
      () => checkDirect(route, '10.213.0.5'),
      (error: unknown) => error instanceof MemberAddressRefused && /refusing to send to member address 10\.213\.0\.5/.test(error.message),
    );
    assert.doesNotThrow(() => checkDirect(route, '127.0.41.3'));
  });

  it(
    'reads the route from the kubeconfig file: its member proxy extension, or the refusal',
    { skip: !inHostNetworkNamespace() && "the refusal applies in the host's namespace" },
    () => {
      assert.deepEqual(resolveMemberRoute(kubeconfig(dir, 'https://127.0.0.1:6443', `http://127.0.0.1:${proxyPort}`), {}), {
        proxy: { host: '127.0.0.1', port: proxyPort },
      });
      assert.ok(resolveMemberRoute(kubeconfig(dir, 'https://127.0.0.1:6443'), {}).refuseNonLoopback);
      assert.deepEqual(resolveMemberRoute(undefined, { KUBECONFIG: join(dir, 'missing') }), {}, 'no kubeconfig: --url members are reached directly');
    },
  );

  it('a refused call sends nothing: callMember throws before connecting', async () => {
    const route = decideRoute({ apiServer: 'https://127.0.0.1:6443', inHostNamespace: true });
    // 192.0.2.1 (TEST-NET-1) stands for a pod address; the refusal comes before any socket exists.
    await assert.rejects(callMember('http://192.0.2.1:8008', 'GET', '/cluster', undefined, { timeoutMs: 1_000, route }), MemberAddressRefused);
  });

  it('tunnels REST calls and raw connections through the member proxy', async () => {
    const route = decideRoute({ proxy: { url: `http://127.0.0.1:${proxyPort}` }, inHostNamespace: true });
    // Nothing listens on 127.0.0.9:9 (loopback, so a bypass could not leave the machine either).
    const reply = await callMember('http://127.0.0.9:9', 'POST', '/switchover', { leader: 'a' }, { timeoutMs: 5_000, route });
    assert.deepEqual(JSON.parse(reply.text), { path: '/switchover', method: 'POST' });
    assert.ok(tunnels.includes('127.0.0.9:9'), `the call went through the proxy: ${tunnels.join(', ')}`);

    const endpoint = await memberEndpoint(route, '127.0.0.9', 9, 5_000);
    try {
      assert.equal(endpoint.host, '127.0.0.1');
      const text = await fetch(`http://127.0.0.1:${endpoint.port}/cluster`).then((r) => r.text());
      assert.deepEqual(JSON.parse(text), { path: '/cluster', method: 'GET' });
    } finally {
      endpoint.close();
    }
  });
});
