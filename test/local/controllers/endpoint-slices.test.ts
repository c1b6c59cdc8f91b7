import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import { endpointSlicesFor, ManagedByLabel, ServiceNameLabel, sliceSignature } from '../../../local/controllers/endpoint-slices.js';
import { statusDigest } from '../../../local/node/pod-status.js';
import { backendsFromSlices } from '../../../local/proxy/proxy.js';

const service: V1Service = {
  metadata: { name: 'db-rw', namespace: 'ns', uid: 'svc-uid' },
  spec: { selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] },
};

test('slices carry ready and not-ready endpoints per port set; a Service selecting nothing keeps one empty slice', () => {
  const [slice, ...rest] = endpointSlicesFor(service, [
    { ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }], addresses: [{ ip: '127.0.0.2' }], notReadyAddresses: [{ ip: '127.0.0.3' }] },
  ]);
  assert.equal(rest.length, 0);
  assert.equal(slice!.metadata?.name, 'db-rw-0');
  assert.equal(slice!.metadata?.labels?.[ServiceNameLabel], 'db-rw');
  assert.match(slice!.metadata?.labels?.[ManagedByLabel] ?? '', /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a valid label value');
  assert.deepEqual(
    slice!.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]),
    [
      ['127.0.0.2', true],
      ['127.0.0.3', false],
    ],
  );
  assert.deepEqual(backendsFromSlices([slice!], 'pg'), [{ ip: '127.0.0.2', port: 5432 }]);
  const empty = endpointSlicesFor(service, []);
  assert.equal(empty.length, 1);
  assert.deepEqual(empty[0]!.endpoints, []);
  assert.notEqual(sliceSignature(slice), sliceSignature(empty[0]));
});

test('backends from several slices are deduplicated and follow the port name', () => {
  const slice = (name: string, ip: string) => ({
    metadata: { name },
    addressType: 'IPv4',
    ports: [
      { name: 'pg', port: 5432 },
      { name: 'api', port: 8008 },
    ],
    endpoints: [{ addresses: [ip] }],
  });
  const backends = backendsFromSlices([slice('a', '127.0.0.2'), slice('b', '127.0.0.2'), slice('c', '127.0.0.4')], 'api');
  assert.deepEqual(backends, [
    { ip: '127.0.0.2', port: 8008 },
    { ip: '127.0.0.4', port: 8008 },
  ]);
  assert.deepEqual(backendsFromSlices([{ ...slice('v6', '::1'), addressType: 'IPv6' }], 'pg'), []);
});

test("a pod status digest ignores times and other writers' conditions, not Ready", () => {
  const base = { phase: 'Running', podIP: '127.0.0.2', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(1) }] };
  assert.equal(
    statusDigest(base),
    statusDigest({
      ...base,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: new Date(2) },
        { type: 'DisruptionTarget', status: 'True' },
      ],
    }),
  );
  assert.notEqual(statusDigest(base), statusDigest({ ...base, conditions: [{ type: 'Ready', status: 'False' }] }));
});
