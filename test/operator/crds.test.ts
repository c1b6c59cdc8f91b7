import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { crdFiles } from '../../operator/crds/crd-files.js';
import { databaseClusterCrd } from '../../api/crd/crd.js';
import { resourceQuantityPattern } from '../../api/crd/quantity.js';
import { maxQuantityNumber } from '../../api/crd/schema-helpers.js';

const crdDir = new URL('../../crds/', import.meta.url);
const chartCrdDir = new URL('../../charts/keelson/files/crds/', import.meta.url);

type Node = Record<string, unknown>;

/** Every schema node must say its type (structural schema) unless it is an explicit escape hatch. */
function structuralProblems(node: Node, path: string): string[] {
  const problems: string[] = [];
  const typed = typeof node.type === 'string' || node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed) problems.push(`${path}: no type`);
  for (const banned of ['anyOf', 'oneOf', 'allOf', '$ref', 'nullable']) if (banned in node) problems.push(`${path}: ${banned}`);
  if (node.properties && node.additionalProperties) problems.push(`${path}: properties with additionalProperties`);
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Node>)) problems.push(...structuralProblems(child, `${path}.${key}`));
  if (node.items) problems.push(...structuralProblems(node.items as Node, `${path}[]`));
  if (typeof node.additionalProperties === 'object') problems.push(...structuralProblems(node.additionalProperties as Node, `${path}{}`));
  return problems;
}

describe('generated CRDs', () => {
  for (const dir of [crdDir, chartCrdDir]) {
    it(`${dir.pathname.split('/').slice(-3).join('/')} matches the types (run \`npm run crds\` when this fails)`, () => {
      const expected = crdFiles();
      const present = readdirSync(dir)
        .filter((name) => name.endsWith('.yaml'))
        .sort();
      assert.deepEqual(present, [...expected.keys()].sort());
      for (const [name, content] of expected) assert.equal(readFileSync(new URL(name, dir), 'utf8'), content, `${name} is stale`);
    });
  }

  it('is a structural schema well under the 256 KB annotation limit', () => {
    for (const [name, content] of crdFiles()) {
      // Half the annotation limit that client-side `kubectl apply` stores the object in.
      assert.ok(Buffer.byteLength(content) < 128 * 1024, `${name} is ${content.length} bytes`);
      const crd = parse(content) as { spec: { versions: Array<{ schema: { openAPIV3Schema: Node } }> } };
      assert.deepEqual(structuralProblems(crd.spec.versions[0]!.schema.openAPIV3Schema, 'root'), []);
    }
  });

  it('declares names, subresources, printer columns, defaults and CEL rules', () => {
    const crd = databaseClusterCrd();
    assert.equal(crd.metadata?.name, 'databaseclusters.keelson.io');
    assert.deepEqual(crd.spec.names.shortNames, ['dbc']);
    const v1 = crd.spec.versions[0]!;
    assert.deepEqual(v1.subresources?.scale, {
      specReplicasPath: '.spec.instances',
      statusReplicasPath: '.status.instances',
      labelSelectorPath: '.status.selector',
    });
    assert.ok(v1.subresources?.status);
    assert.deepEqual(
      v1.additionalPrinterColumns?.map((c) => c.name),
      ['Instances', 'Ready', 'Primary', 'Phase', 'Disk', 'Age'],
    );
    const spec = (v1.schema?.openAPIV3Schema?.properties as Record<string, Node>).spec as Node;
    const props = spec.properties as Record<string, Node>;
    assert.equal((props.instances as Node).default, 3);
    const ha = props.ha as Node;
    assert.deepEqual(
      (ha['x-kubernetes-validations'] as Array<{ rule: string }>).map((r) => r.rule),
      ['self.loopWait + 2 * self.retryTimeout <= self.ttl', '!has(self.primaryHangTimeout) || self.primaryHangTimeout == 0 || self.primaryHangTimeout >= 5'],
    );
    assert.match(JSON.stringify(spec['x-kubernetes-validations']), /synchronousNodeCount < self.instances/);
    // Fields fixed at creation are transition rules: the operator could not act on a change.
    assert.match(JSON.stringify(spec['x-kubernetes-validations']), /self\.postgresVersion == oldSelf\.postgresVersion/);
    assert.match(JSON.stringify((props.storage as Node)['x-kubernetes-validations']), /self\.storageClass == oldSelf\.storageClass/);
    assert.deepEqual((((props.ha as Node).properties as Record<string, Node>).synchronousMode as Node).enum, ['off', 'on', 'strict', 'quorum']);
    const limits = ((props.resources as Node).properties as Record<string, Node>).limits as Node;
    assert.deepEqual(limits.additionalProperties, {
      'x-kubernetes-int-or-string': true,
      pattern: resourceQuantityPattern,
      minimum: 0,
      maximum: maxQuantityNumber,
    });
    const root = v1.schema?.openAPIV3Schema as Node;
    assert.deepEqual((root.properties as Record<string, Node>).metadata, {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 40, pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$' } },
    });
    assert.deepEqual(
      (root['x-kubernetes-validations'] as Array<{ fieldPath?: string }>).map((r) => r.fieldPath),
      ['.spec.switchover.targetInstance'],
      'every root rule names its field',
    );
  });
});
