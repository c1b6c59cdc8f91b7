// The TCP forwarder with real sockets: round robin over backends, and connections to a removed
// backend are closed when the backend list changes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { PortForwarder } from '../../../local/proxy/forwarder.js';
import { backendsFor, proxiedPorts, splitBackends } from '../../../local/proxy/proxy.js';
import { createLogger } from '../../../lib/log.js';
import { freePort } from '../../support/ports.js';
import { randomIpPrefix } from '../node/helpers.js';

const logger = createLogger({ name: 'forwarder-test', level: 'silent' });
const prefix = randomIpPrefix();
const servers: Server[] = [];
const forwarders: PortForwarder[] = [];

after(async () => {
  await Promise.all(forwarders.map((f) => f.close()));
  for (const server of servers) server.close();
});

/** A backend that greets every connection with its name and echoes what it receives. */
async function backend(ip: string, name: string): Promise<number> {
  const server = createServer((socket) => {
    socket.write(`${name}\n`);
    socket.on('data', (d) => socket.write(d));
    socket.on('error', () => undefined);
  });
  servers.push(server);
  server.listen(0, ip);
  await once(server, 'listening');
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

async function greeting(socket: Socket): Promise<string> {
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  return chunk.toString().trim();
}

test('forwards round robin and drops connections to removed backends', async () => {
  const portA = await backend(`${prefix}.10`, 'a');
  const portB = await backend(`${prefix}.11`, 'b');
  const clusterIP = `${prefix}.250`;
  const port = await freePort(clusterIP);
  const forwarder = new PortForwarder(clusterIP, port, logger);
  forwarders.push(forwarder);

  // No backends: nothing listens, the connection is refused (kube-proxy's REJECT).
  const early = connect({ host: clusterIP, port });
  const [refusal] = (await once(early, 'error')) as [NodeJS.ErrnoException];
  assert.equal(refusal.code, 'ECONNREFUSED');

  await forwarder.setBackends([
    { ip: `${prefix}.10`, port: portA },
    { ip: `${prefix}.11`, port: portB },
  ]);
  const first = connect({ host: clusterIP, port });
  const second = connect({ host: clusterIP, port });
  const names = [await greeting(first), await greeting(second)].sort();
  assert.deepEqual(names, ['a', 'b']);
  first.write('ping');
  assert.equal(await greeting(first), 'ping');
  assert.equal(forwarder.openConnections, 2);

  const toA = names[0] === 'a' ? first : second;
  const toB = toA === first ? second : first;
  const closed = once(toA, 'close');
  await forwarder.setBackends([{ ip: `${prefix}.11`, port: portB }]);
  await closed;
  assert.equal(toB.destroyed, false, 'the connection to the remaining backend stays open');
  const third = connect({ host: clusterIP, port });
  assert.equal(await greeting(third), 'b');
  toB.destroy();
  third.destroy();
  await forwarder.setBackends([]);
  assert.equal(forwarder.listening, false);
  const late = connect({ host: clusterIP, port });
  assert.equal(((await once(late, 'error')) as [NodeJS.ErrnoException])[0].code, 'ECONNREFUSED');
});

test('backends come from ready Endpoints addresses of the matching port name', () => {
  const endpoints = {
    subsets: [
      {
        addresses: [{ ip: '127.0.0.2' }, { ip: '127.0.0.3' }],
        notReadyAddresses: [{ ip: '127.0.0.4' }],
        ports: [
          { name: 'pg', port: 5432 },
          { name: 'api', port: 8008 },
        ],
      },
    ],
  };
  assert.deepEqual(backendsFor(endpoints, 'api'), [
    { ip: '127.0.0.2', port: 8008 },
    { ip: '127.0.0.3', port: 8008 },
  ]);
  assert.deepEqual(backendsFor({ subsets: [{ addresses: [{ ip: '127.0.0.2' }], ports: [{ port: 80 }] }] }, undefined), [{ ip: '127.0.0.2', port: 80 }]);
  assert.deepEqual(backendsFor(undefined, 'x'), []);
  assert.equal(proxiedPorts({ spec: { clusterIP: 'None', ports: [{ port: 1 }] } }).length, 0);
  assert.equal(proxiedPorts({ spec: { ports: [{ port: 1 }, { port: 2, protocol: 'UDP' }] } }).length, 1);
});

test('splitBackends: loopback scope refuses every address outside 127.0.0.0/8, namespace scope keeps all', () => {
  const backends = [
    { ip: '127.0.3.4', port: 1 },
    { ip: '10.1.2.3', port: 1 },
    { ip: '192.168.0.1', port: 2 },
    { ip: '127.0.0.1.evil', port: 3 },
  ];
  assert.deepEqual(splitBackends(backends, 'loopback').allowed, [{ ip: '127.0.3.4', port: 1 }]);
  assert.equal(splitBackends(backends, 'loopback').refused.length, 3);
  assert.deepEqual(splitBackends(backends, 'namespace'), { allowed: backends, refused: [] });
});
