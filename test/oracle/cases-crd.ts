/**
 * CustomResourceDefinitions through real kubectl: registration, printer columns, defaulting,
 * pruning, schema validation, and the status and scale subresources.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { caseTempDir, type CaseModule, eventually, NS } from './context.js';
import type { ContractServer } from './targets.js';
import { databaseCrd } from '../local/apiserver/fixtures.js';
import { kubeJson } from '../support/kube.js';

const run = promisify(execFile);

export async function kubectl(server: ContractServer, ...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 60_000 });
  return stdout;
}

export const GROUP = 'contract.keelson.io';
export const widgetPath = (name = ''): string => `/apis/${GROUP}/v1/namespaces/${NS}/widgets${name ? `/${name}` : ''}`;

/** Applies the CRD with kubectl and waits until it is Established and served. */
export async function installWidgetCrd(server: ContractServer, dir: string): Promise<void> {
  const file = join(dir, 'crd.yaml');
  writeFileSync(file, stringify(databaseCrd({ group: GROUP, plural: 'widgets', kind: 'Widget', shortNames: ['wdg'] })));
  assert.match(await kubectl(server, 'apply', '-f', file), /customresourcedefinition.apiextensions.k8s.io\/widgets.contract.keelson.io (created|unchanged)/);
  await eventually(
    'CRD Established and served',
    async () => {
      const crd = await kubeJson(server, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`);
      const conditions = (crd.body.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
      if (!conditions.some((c) => c.type === 'Established' && c.status === 'True')) return undefined;
      return (await kubeJson(server, 'GET', widgetPath())).status === 200 ? true : undefined;
    },
    30_000,
  );
}

export const crdCases: CaseModule = (ctx) => {
  const tempDir = caseTempDir('keelson-contract-crd-');

  it('kubectl apply registers a CRD and a custom resource; kubectl get shows the printer columns', async () => {
    const { server } = ctx();
    await installWidgetCrd(server, tempDir());
    const cr = join(tempDir(), 'cr.yaml');
    writeFileSync(cr, stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: NS }, spec: { instances: 3 } }));
    assert.match(await kubectl(server, 'apply', '-f', cr), /widget.contract.keelson.io\/w1 created/);
    const table = await kubectl(server, 'get', 'widgets', '-n', NS);
    const [header, row] = table.trimEnd().split('\n');
    assert.deepEqual(header.split(/\s+/), ['NAME', 'INSTANCES', 'PHASE', 'READY', 'AGE']);
    assert.match(row, /^w1\s+3\s+\S+s$/);
    const short = await kubectl(server, 'get', 'wdg', 'w1', '-n', NS, '-o', 'jsonpath={.spec.version}');
    assert.equal(short, '15', 'the schema default is filled in');
  });

  it('prunes unknown fields, keeps preserved ones, and rejects schema violations with 422', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-prune' }, spec: { instances: 1, bogus: true, extra: { free: { form: 1 } } } },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.spec, { instances: 1, version: '15', extra: { free: { form: 1 } } });
    const invalid = await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-bad' }, spec: { instances: 0, version: '9' } },
    });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.body.reason, 'Invalid');
    const fields = (invalid.body.details as { causes: Array<{ field: string }> }).causes.map((c) => c.field).sort();
    assert.deepEqual(fields, ['spec.instances', 'spec.version']);
    const missing = await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-missing' }, spec: {} },
    });
    assert.equal(missing.status, 422);
    assert.deepEqual(
      (missing.body.details as { causes: Array<{ field: string; reason: string }> }).causes.map((c) => [c.field, c.reason]),
      [['spec.instances', 'FieldValueRequired']],
    );
  });

  it('status subresource: the main endpoint ignores status, /status ignores spec, generation counts spec changes', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-status' }, spec: { instances: 2 }, status: { phase: 'Ignored' } },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.status, undefined);
    assert.equal((created.body.metadata as { generation: number }).generation, 1);
    const status = await kubeJson(server, 'PATCH', widgetPath('w-status/status'), {
      body: { spec: { instances: 7 }, status: { phase: 'Running', instances: 2 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.body.status, { phase: 'Running', instances: 2 });
    assert.equal((status.body.spec as { instances: number }).instances, 2);
    assert.equal((status.body.metadata as { generation: number }).generation, 1);
    const spec = await kubeJson(server, 'PATCH', widgetPath('w-status'), {
      body: { spec: { instances: 4 }, status: { phase: 'Nope' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal((spec.body.metadata as { generation: number }).generation, 2);
    assert.deepEqual(spec.body.status, { phase: 'Running', instances: 2 });
    const table = await kubectl(server, 'get', 'widget', 'w-status', '-n', NS, '--no-headers');
    assert.match(table, /^w-status\s+4\s+Running\s+/);
  });

  it('scale subresource: GET /scale and kubectl scale map onto spec.instances', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', widgetPath(), {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-scale' }, spec: { instances: 3 } },
    });
    await kubeJson(server, 'PATCH', widgetPath('w-scale/status'), {
      body: { status: { instances: 3, selector: 'app=w-scale' } },
      contentType: 'application/merge-patch+json',
    });
    const scale = await kubeJson(server, 'GET', widgetPath('w-scale/scale'));
    assert.equal(scale.status, 200);
    assert.equal(scale.body.apiVersion, 'autoscaling/v1');
    assert.equal(scale.body.kind, 'Scale');
    assert.deepEqual(scale.body.spec, { replicas: 3 });
    assert.deepEqual(scale.body.status, { replicas: 3, selector: 'app=w-scale' });
    assert.match(await kubectl(server, 'scale', 'widget/w-scale', '-n', NS, '--replicas=5'), /widget.contract.keelson.io\/w-scale scaled/);
    const after5 = await kubeJson(server, 'GET', widgetPath('w-scale'));
    assert.equal((after5.body.spec as { instances: number }).instances, 5);
    const badScale = await kubeJson(server, 'PUT', widgetPath('w-scale/scale'), {
      body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'w-scale', namespace: NS }, spec: { replicas: -1 } },
    });
    // -1 is written into spec.instances and the CRD schema (minimum 1) refuses it (was difference D3).
    assert.equal(badScale.status, 422, badScale.text);
    assert.equal(badScale.body.reason, 'Invalid');
    assert.ok(
      (badScale.body.details as { causes: Array<{ field: string }> }).causes.some((c) => c.field === 'spec.instances'),
      badScale.text,
    );
    const unchanged = await kubeJson(server, 'GET', widgetPath('w-scale'));
    assert.equal((unchanged.body.spec as { instances: number }).instances, 5);
  });
};
