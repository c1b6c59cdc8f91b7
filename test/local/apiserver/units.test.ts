import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { applyServerSideApply } from '../../../local/apiserver/writes/apply.js';
import { evaluateRules } from '../../../local/apiserver/schema/cel.js';
import { generateCertificates } from '../../../local/apiserver/security/certs.js';
import { admitCustomResource } from '../../../local/apiserver/schema/schema.js';
import { sortVersions } from '../../../local/apiserver/http/discovery.js';
import { leafPaths, removeAt, toFieldsV1, fromFieldsV1 } from '../../../local/apiserver/writes/fieldpaths.js';
import { evaluateJsonPath } from '../../../local/apiserver/schema/jsonpath.js';
import { applyJsonPatch, applyMergePatch, strategicMerge } from '../../../local/apiserver/writes/patch.js';
import { formatLabelSelector, parseFieldSelector, parseLabelSelector } from '../../../local/apiserver/storage/selectors.js';
import { ObjectStore } from '../../../local/apiserver/storage/store.js';
import type { KubeObject } from '../../../local/apiserver/types.js';

describe('API server stand-in building blocks', () => {
  it('parses label selectors like the real server', () => {
    const match = parseLabelSelector('app=db,tier in (a, b),!canary,env,role!=replica');
    assert.equal(match({ app: 'db', tier: 'a', env: 'x' }), true);
    assert.equal(match({ app: 'db', tier: 'c', env: 'x' }), false);
    assert.equal(match({ app: 'db', tier: 'a', env: 'x', canary: '1' }), false);
    assert.equal(match({ app: 'db', tier: 'b', env: 'x', role: 'replica' }), false);
    assert.equal(match({ app: 'db', tier: 'b' }), false, 'env must exist');
    assert.equal(parseLabelSelector('')(undefined), true);
    assert.throws(() => parseLabelSelector('a=b=c'), /found '=', expected: ',' or 'end of string'/);
    assert.equal(
      formatLabelSelector({
        matchLabels: { a: 'b' },
        matchExpressions: [
          { key: 'c', operator: 'In', values: ['d', 'e'] },
          { key: 'f', operator: 'DoesNotExist' },
        ],
      }),
      'a=b,c in (d,e),!f',
    );
    assert.deepEqual(parseFieldSelector('metadata.name=x,status.phase!=Running'), [
      { field: 'metadata.name', negate: false, value: 'x' },
      { field: 'status.phase', negate: true, value: 'Running' },
    ]);
  });

  it('applies JSON patch operations atomically', () => {
    const doc = { a: { b: [1, 2, 3] }, c: 'x' };
    assert.deepEqual(
      applyJsonPatch(doc, [
        { op: 'move', from: '/c', path: '/d' },
        { op: 'copy', from: '/a/b/0', path: '/a/b/-' },
      ]),
      { a: { b: [1, 2, 3, 1] }, d: 'x' },
    );
    assert.throws(
      () =>
        applyJsonPatch(doc, [
          { op: 'remove', path: '/c' },
          { op: 'test', path: '/a/b/0', value: 9 },
        ]),
      /testing value/,
    );
    assert.deepEqual(doc, { a: { b: [1, 2, 3] }, c: 'x' }, 'the input is never modified');
    assert.deepEqual(applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null }, l: [3] }), { a: { c: 2 }, l: [3] });
  });

  it('implements the strategic merge directives kubectl sends', () => {
    const live = {
      containers: [
        { name: 'a', image: 'x', env: [{ name: 'K', value: '1' }] },
        { name: 'b', image: 'y' },
      ],
      finalizers: ['f1', 'f2'],
    };
    const ordered = strategicMerge(live, {
      $setElementOrder: undefined,
      containers: [{ name: 'c', image: 'z' }],
      '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }],
    } as never);
    assert.deepEqual(
      (ordered.containers as Array<{ name: string }>).map((c) => c.name),
      ['c', 'b', 'a'],
    );
    const removed = strategicMerge(live, { '$deleteFromPrimitiveList/finalizers': ['f1'] });
    assert.deepEqual(removed.finalizers, ['f2']);
    const replaced = strategicMerge(live, { containers: [{ name: 'only', image: 'q' }, { $patch: 'replace' }] });
    assert.deepEqual(replaced.containers, [{ name: 'only', image: 'q' }]);
    const retained = strategicMerge(
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
      { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
    );
    assert.deepEqual(retained.strategy, { type: 'Recreate' });
    const envMerged = strategicMerge(live, { containers: [{ name: 'a', env: [{ name: 'K2', value: '2' }] }] });
    assert.deepEqual((envMerged.containers as Array<{ env?: unknown[] }>)[0].env, [
      { name: 'K', value: '1' },
      { name: 'K2', value: '2' },
    ]);
  });

  it('evaluates the JSONPath subset of printer columns', () => {
    const o = {
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Synced', status: 'False' },
        ],
      },
      spec: { list: [{ n: 1 }, { n: 2 }] },
    };
    assert.deepEqual(evaluateJsonPath(o, '.status.conditions[?(@.type=="Ready")].status'), ['True']);
    assert.deepEqual(evaluateJsonPath(o, '.spec.list[*].n'), [1, 2]);
    assert.deepEqual(evaluateJsonPath(o, '.spec.missing'), []);
    assert.throws(() => evaluateJsonPath(o, '.spec..list'), /unsupported JSONPath/);
  });

  it('tracks managed field paths in FieldsV1 notation and prunes emptied items', () => {
    const o = { spec: { containers: [{ name: 'a', image: 'x' }], replicas: 2 } };
    const paths = [...leafPaths(o).keys()];
    const fields = toFieldsV1(paths);
    assert.deepEqual(fields, { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { 'f:name': {}, 'f:image': {} } }, 'f:replicas': {} } });
    assert.deepEqual([...fromFieldsV1(fields)].sort(), [...paths].sort());
    const copy = structuredClone(o) as Record<string, unknown>;
    for (const p of paths.filter((x) => x.includes('containers'))) removeAt(copy, p);
    assert.deepEqual(copy, { spec: { replicas: 2 } });
  });

  it('server-side apply removes list items the manager stops applying and reports conflicts', () => {
    const applied = (containers: Array<{ name: string; image: string }>, replicas = 1): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { replicas, template: { spec: { containers } } },
    });
    const first = applyServerSideApply(
      undefined,
      applied([
        { name: 'a', image: 'x' },
        { name: 'b', image: 'y' },
      ]),
      'op',
      false,
      'apps/v1',
    );
    const second = applyServerSideApply(first, applied([{ name: 'a', image: 'x' }]), 'op', false, 'apps/v1');
    assert.deepEqual((second.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers, [{ name: 'a', image: 'x' }]);
    assert.throws(
      () => applyServerSideApply(second, applied([{ name: 'a', image: 'x' }], 5), 'other', false, 'apps/v1'),
      /conflict with "op": \.spec\.replicas/,
    );
    const forced = applyServerSideApply(second, applied([{ name: 'a', image: 'x' }], 5), 'other', true, 'apps/v1');
    assert.equal((forced.spec as { replicas: number }).replicas, 5);
    const owners = (forced.metadata.managedFields ?? []).map((m) => `${m.manager}:${JSON.stringify(m.fieldsV1).includes('f:replicas')}`);
    assert.deepEqual(owners.sort(), ['op:false', 'other:true'], 'forcing moves ownership');
  });

  it('runs CEL rules with integers as int and transition rules only on update', () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer' }, name: { type: 'string' } },
      'x-kubernetes-validations': [
        { rule: 'self.n % 2 == 0', message: 'n must be even' },
        { rule: 'self.name == oldSelf.name', message: 'name is immutable' },
      ],
    };
    assert.deepEqual(evaluateRules({ n: 2, name: 'a' }, undefined, schema, 'spec'), []);
    assert.match(evaluateRules({ n: 3, name: 'a' }, undefined, schema, 'spec')[0].message, /n must be even/);
    assert.match(evaluateRules({ n: 2, name: 'b' }, { n: 2, name: 'a' }, schema, 'spec')[0].message, /name is immutable/);
  });

  it('reports a rule with fieldPath on that field, also at the root (no leading dot, no <nil>)', () => {
    const rules = [{ rule: 'self.spec.n % 2 == 0', message: 'n must be even', fieldPath: '.spec.n' }];
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } }, 'x-kubernetes-validations': rules };
    assert.deepEqual(
      evaluateRules({ spec: { n: 3 } }, undefined, schema, '').map((e) => e.field),
      ['spec.n'],
    );
    const nested = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { n: { type: 'integer' } },
          'x-kubernetes-validations': [{ ...rules[0], rule: 'self.n % 2 == 0', fieldPath: '.n' }],
        },
      },
    };
    assert.deepEqual(
      evaluateRules({ spec: { n: 3 } }, undefined, nested, '').map((e) => e.field),
      ['spec.n'],
    );
  });

  it('validates metadata.name and generateName against the restrictions a CRD schema puts on them', () => {
    const schema = {
      type: 'object' as const,
      properties: { metadata: { type: 'object' as const, properties: { name: { type: 'string' as const, maxLength: 5, pattern: '^[a-z]+$' } } } },
    };
    const resource = (name: string): KubeObject => ({ apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name, namespace: 'ns' } });
    assert.doesNotThrow(() => admitCustomResource(resource('abc'), schema, false));
    assert.throws(
      () => admitCustomResource(resource('a.b'), schema, false),
      /metadata\.name: Invalid value: "a\.b": metadata\.name in body should match '\^\[a-z\]\+\$'/,
    );
    assert.throws(() => admitCustomResource(resource('abcdef'), schema, false), /metadata\.name: Too long/);
  });

  it('orders API versions as Kubernetes does', () => {
    assert.deepEqual(sortVersions(['v1beta1', 'v1alpha1', 'v2', 'v1', 'v1beta2']), ['v2', 'v1', 'v1beta2', 'v1beta1', 'v1alpha1']);
  });

  it('keeps a bounded history and answers 410 beyond it', () => {
    const store = new ObjectStore(3);
    const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
    const start = store.currentRevision;
    for (const n of ['a', 'b', 'c', 'd', 'e']) store.put('/configmaps', obj(n));
    assert.equal(store.eventsSince(store.currentRevision - 3).length, 3);
    assert.throws(
      () => store.eventsSince(start),
      (e: Error & { code?: number }) => e.code === 410,
    );
    const removed = store.remove('/configmaps', 'default', 'a');
    assert.equal(removed?.metadata.resourceVersion, String(store.currentRevision), 'DELETED carries a new resourceVersion');
  });

  it('issues a CA and certificates that verify', () => {
    const bundle = generateCertificates(['127.0.0.1', 'localhost']);
    const ca = new X509Certificate(bundle.caCert);
    const server = new X509Certificate(bundle.serverCert);
    const client = new X509Certificate(bundle.issueClient('node-1').cert);
    assert.equal(ca.ca, true);
    assert.equal(server.verify(ca.publicKey), true);
    assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(server.checkHost('localhost'), 'localhost');
    assert.equal(client.verify(ca.publicKey), true);
    assert.match(client.subject, /CN=node-1/);
  });
});
