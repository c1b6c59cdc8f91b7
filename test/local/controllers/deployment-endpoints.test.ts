import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Deployment, V1DeploymentStrategy, V1Pod, V1Service } from '@kubernetes/client-node';
import { deploymentPod, deploymentStatus, hashLabel, planDeployment, resolveIntOrPercent } from '../../../local/controllers/deployment.js';
import { endpointSubsets, endpointsFor, endpointsSignature } from '../../../local/controllers/endpoints.js';
import { selectorMatches, selectorString, templateHash } from '../../../local/controllers/pod-template.js';

function deployment(replicas = 4, strategy?: V1DeploymentStrategy): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'ns', uid: 'dep-uid', generation: 2 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      strategy,
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:2' }] } },
    },
  };
}

function podOf(d: V1Deployment, name: string, opts: { old?: boolean; ready?: boolean } = {}): V1Pod {
  const p = deploymentPod(d);
  p.metadata!.name = name;
  if (opts.old) p.metadata!.labels![hashLabel] = 'oldhash';
  p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] };
  return p;
}

test('int-or-percent resolution rounds surge up and unavailable down', () => {
  assert.equal(resolveIntOrPercent(undefined, '25%', 3, true), 1);
  assert.equal(resolveIntOrPercent(undefined, '25%', 3, false), 0);
  assert.equal(resolveIntOrPercent(2, '25%', 3, false), 2);
  assert.equal(resolveIntOrPercent('50%', '25%', 5, true), 3);
});

test('deployment pods carry the template hash, owner and a unique name', () => {
  const d = deployment();
  const a = deploymentPod(d);
  const b = deploymentPod(d);
  assert.equal(a.metadata?.labels?.[hashLabel], templateHash(d.spec?.template));
  assert.match(a.metadata?.name ?? '', new RegExp(`^web-${templateHash(d.spec?.template)}-[a-z0-9]{5}$`));
  assert.notEqual(a.metadata?.name, b.metadata?.name);
  assert.equal(a.metadata?.ownerReferences?.[0].kind, 'Deployment');
});

test('scale up creates the missing pods; scale down deletes unready ones first', () => {
  const d = deployment(3);
  assert.deepEqual(planDeployment(d, []), [{ type: 'create', count: 3 }]);
  const down = planDeployment(deployment(1), [podOf(d, 'a'), podOf(d, 'b', { ready: false }), podOf(d, 'c')]);
  assert.equal(down.length, 2);
  assert.equal(down[0].type === 'delete' && down[0].pod.metadata?.name, 'b');
});

test('rolling update surges new pods and removes old ones within maxUnavailable', () => {
  const d = deployment(4);
  const old = ['o1', 'o2', 'o3', 'o4'].map((n) => podOf(d, n, { old: true }));
  const first = planDeployment(d, old);
  // maxSurge 1 → one new pod; maxUnavailable 1 → one old pod may go.
  assert.deepEqual(
    first.filter((a) => a.type === 'create'),
    [{ type: 'create', count: 1 }],
  );
  assert.equal(first.filter((a) => a.type === 'delete').length, 1);
  const recreate = planDeployment(deployment(2, { type: 'Recreate' }), [podOf(d, 'o1', { old: true }), podOf(d, 'o2', { old: true })]);
  assert.deepEqual(
    recreate.map((a) => a.type),
    ['delete', 'delete'],
  );
  const status = deploymentStatus(d, [...old.slice(0, 3), podOf(d, 'n1', { ready: false })]);
  assert.equal(status.replicas, 4);
  assert.equal(status.updatedReplicas, 1);
  assert.equal(status.availableReplicas, 3);
  assert.equal(status.conditions?.find((c) => c.type === 'Available')?.status, 'True');
});

test('label selectors match like the API server and render for list calls', () => {
  const selector = {
    matchLabels: { app: 'db' },
    matchExpressions: [
      { key: 'role', operator: 'In', values: ['primary', 'replica'] },
      { key: 'gone', operator: 'DoesNotExist' },
    ],
  };
  assert.equal(selectorMatches(selector, { app: 'db', role: 'primary' }), true);
  assert.equal(selectorMatches(selector, { app: 'db', role: 'other' }), false);
  assert.equal(selectorMatches(selector, { app: 'db', role: 'replica', gone: '' }), false);
  assert.equal(selectorString(selector), 'app=db,role in (primary,replica),!gone');
});

const service: V1Service = {
  metadata: { name: 'db-rw', namespace: 'ns', labels: { team: 'x' } },
  spec: {
    selector: { app: 'db', role: 'primary' },
    ports: [
      { name: 'pg', port: 5432, targetPort: 'postgres' },
      { name: 'api', port: 80, targetPort: 8008 },
    ],
  },
};

function dbPod(name: string, ip: string | undefined, opts: { ready?: boolean; role?: string; terminating?: boolean; pgPort?: number } = {}): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels: { app: 'db', role: opts.role ?? 'primary' },
      deletionTimestamp: opts.terminating ? new Date() : undefined,
    },
    spec: {
      nodeName: 'n',
      hostname: name,
      subdomain: 'db-rw',
      containers: [{ name: 'pg', ports: [{ name: 'postgres', containerPort: opts.pgPort ?? 5432 }] }],
    },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

test('endpoints list ready pods as addresses and the rest as notReadyAddresses, resolving named ports', () => {
  const subsets = endpointSubsets(service, [
    dbPod('b', '127.0.0.3'),
    dbPod('a', '127.0.0.2', { ready: false }),
    dbPod('c', '127.0.0.4', { role: 'replica' }),
    dbPod('d', undefined),
    dbPod('e', '127.0.0.6', { terminating: true }),
    dbPod('f', '127.0.0.10', { pgPort: 5433 }),
  ]);
  assert.equal(subsets.length, 2);
  assert.deepEqual(subsets[0].ports, [
    { name: 'pg', port: 5432, protocol: 'TCP', appProtocol: undefined },
    { name: 'api', port: 8008, protocol: 'TCP', appProtocol: undefined },
  ]);
  assert.deepEqual(
    subsets[0].addresses?.map((a) => a.ip),
    ['127.0.0.3'],
  );
  assert.equal(subsets[0].addresses?.[0].hostname, 'b');
  assert.deepEqual(
    subsets[0].notReadyAddresses?.map((a) => a.ip),
    ['127.0.0.2'],
  );
  assert.equal(subsets[1].ports?.[0].port, 5433);
  const published = endpointSubsets({ ...service, spec: { ...service.spec, publishNotReadyAddresses: true } }, [dbPod('a', '127.0.0.2', { ready: false })]);
  assert.deepEqual(
    published[0].addresses?.map((a) => a.ip),
    ['127.0.0.2'],
  );
  const ep = endpointsFor(service, [dbPod('b', '127.0.0.3')]);
  assert.equal(ep.metadata?.name, 'db-rw');
  assert.equal(ep.metadata?.labels?.team, 'x');
  assert.equal(endpointsSignature(ep), endpointsSignature(JSON.parse(JSON.stringify(ep))));
  assert.notEqual(endpointsSignature(ep), endpointsSignature(endpointsFor(service, [])));
});
