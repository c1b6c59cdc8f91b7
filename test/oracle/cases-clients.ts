/** Unmodified clients against both servers: kubectl verbs and a client-node informer. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { kubectl } from './cases-crd.js';
import { caseTempDir, type CaseModule, cmPath, eventually, NS } from './context.js';
import { kubeJson } from '../support/kube.js';

export const clientCases: CaseModule = (ctx) => {
  const tempDir = caseTempDir('keelson-contract-clients-');

  it('kubectl apply --server-side, describe, and delete', async () => {
    const { server } = ctx();
    const file = join(tempDir(), 'cm.yaml');
    writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kc-ssa', namespace: NS }, data: { mode: 'enabled' } }));
    assert.match(await kubectl(server, 'apply', '--server-side', '-f', file), /configmap\/kc-ssa serverside-applied/);
    const applied = await kubeJson(server, 'GET', cmPath('kc-ssa'));
    const managers = (applied.body.metadata as { managedFields: Array<{ manager: string; operation: string }> }).managedFields;
    assert.deepEqual(
      managers.map((m) => [m.manager, m.operation]),
      [['kubectl', 'Apply']],
    );
    const described = await kubectl(server, 'describe', 'configmap', 'kc-ssa', '-n', NS);
    assert.match(described, /^Name:\s+kc-ssa$/m);
    assert.match(described, /^Namespace:\s+contract$/m);
    assert.match(described, /^mode:\n-+\nenabled$/m);
    assert.match(await kubectl(server, 'delete', 'configmap', 'kc-ssa', '-n', NS), /configmap "kc-ssa" deleted/);
    assert.equal((await kubeJson(server, 'GET', cmPath('kc-ssa'))).status, 404);
  });

  it('kubectl client-side apply twice: removed list entries and fields disappear (three-way strategic merge)', async () => {
    const { server } = ctx();
    // JSON, not YAML: kubectl reads YAML 1.1, where an unquoted yes/on is a boolean.
    const file = join(tempDir(), 'deploy.json');
    const deployment = (env: Array<{ name: string; value: string }>, extraContainer: boolean, annotations: Record<string, string>, replicas?: number) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'kc-apply', namespace: NS, annotations },
      spec: {
        ...(replicas === undefined ? {} : { replicas }),
        selector: { matchLabels: { app: 'kc-apply' } },
        template: {
          metadata: { labels: { app: 'kc-apply' } },
          spec: { containers: [{ name: 'main', image: 'img:1', env }, ...(extraContainer ? [{ name: 'side', image: 'side:1' }] : [])] },
        },
      },
    });
    writeFileSync(
      file,
      JSON.stringify(
        deployment(
          [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          true,
          { keep: 'yes', drop: 'yes' },
          2,
        ),
      ),
    );
    assert.match(await kubectl(server, 'apply', '-f', file), /deployment.apps\/kc-apply created/);
    // Another writer changes replicas; apply must leave fields it never set alone.
    await kubeJson(server, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/kc-apply`, {
      body: { spec: { replicas: 5 } },
      contentType: 'application/merge-patch+json',
    });
    writeFileSync(file, JSON.stringify(deployment([{ name: 'B', value: '3' }], false, { keep: 'yes' })));
    assert.match(await kubectl(server, 'apply', '-f', file), /deployment.apps\/kc-apply configured/);
    const got = await kubeJson(server, 'GET', `/apis/apps/v1/namespaces/${NS}/deployments/kc-apply`);
    const spec = got.body.spec as {
      replicas: number;
      template: { spec: { containers: Array<{ name: string; env?: Array<{ name: string; value: string }> }> } };
    };
    assert.deepEqual(
      spec.template.spec.containers.map((c) => c.name),
      ['main'],
    );
    assert.deepEqual(spec.template.spec.containers[0].env, [{ name: 'B', value: '3' }]);
    const annotations = (got.body.metadata as { annotations: Record<string, string> }).annotations;
    assert.equal(annotations.keep, 'yes');
    assert.equal(annotations.drop, undefined);
    assert.ok(annotations['kubectl.kubernetes.io/last-applied-configuration']);
    // replicas left the manifest: the last-applied diff removes it, and the default (1) comes back.
    assert.equal(spec.replicas, 1);
  });

  it('kubectl get shows server-side Tables (ConfigMap DATA, Lease HOLDER)', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'kc-table' }, data: { a: '1', b: '2' } } });
    const table = await kubeJson(server, 'GET', cmPath('kc-table'), { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    assert.equal(table.body.kind, 'Table');
    assert.deepEqual(
      (table.body.columnDefinitions as Array<{ name: string }>).map((c) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.deepEqual((table.body.rows as Array<{ cells: unknown[] }>)[0].cells.slice(0, 2), ['kc-table', 2]);
    await kubeJson(server, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
      body: { metadata: { name: 'kc-lease' }, spec: { holderIdentity: 'member-0' } },
    });
    const [header, row] = (await kubectl(server, 'get', 'lease', 'kc-lease', '-n', NS)).trimEnd().split('\n');
    assert.deepEqual(header.split(/\s+/), ['NAME', 'HOLDER', 'AGE']);
    assert.match(row, /^kc-lease\s+member-0\s+\S+$/);
  });

  it('kubectl get -w prints each change', async () => {
    const { server } = ctx();
    await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'kc-watch', labels: { kw: 'yes' } }, data: { v: '1' } } });
    const child = spawn(
      'kubectl',
      [
        '--kubeconfig',
        server.kubeconfigPath,
        'get',
        'configmaps',
        '-n',
        NS,
        '-l',
        'kw=yes',
        '-w',
        '--output-watch-events',
        '-o',
        'custom-columns=EVENT:.type,NAME:.object.metadata.name,V:.object.data.v',
        '--no-headers',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await eventually('initial line', async () => (/ADDED\s+kc-watch\s+1/.test(out) ? true : undefined), 20_000);
      await kubeJson(server, 'PATCH', cmPath('kc-watch'), { body: { data: { v: '2' } }, contentType: 'application/merge-patch+json' });
      await eventually('modified line', async () => (/MODIFIED\s+kc-watch\s+2/.test(out) ? true : undefined), 20_000);
      await kubeJson(server, 'DELETE', cmPath('kc-watch'));
      await eventually('deleted line', async () => (/DELETED\s+kc-watch\s+2/.test(out) ? true : undefined), 20_000);
    } finally {
      child.kill();
    }
  });

  it('a client-node informer sees add, update and delete', async () => {
    const { server } = ctx();
    const api = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(
      server.kubeConfig,
      `${cmPath()}`,
      () => api.listNamespacedConfigMap({ namespace: NS, labelSelector: 'inf=yes' }),
      'inf=yes',
    );
    const seen: string[] = [];
    informer.on('add', (o: k8s.V1ConfigMap) => seen.push(`add ${o.metadata?.name} ${o.data?.v}`));
    informer.on('update', (o: k8s.V1ConfigMap) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o: k8s.V1ConfigMap) => seen.push(`delete ${o.metadata?.name}`));
    await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'inf-1', labels: { inf: 'yes' } }, data: { v: '1' } } });
    await informer.start();
    try {
      await kubeJson(server, 'POST', cmPath(), { body: { metadata: { name: 'inf-2', labels: { inf: 'yes' } }, data: { v: '1' } } });
      await kubeJson(server, 'PATCH', cmPath('inf-1'), { body: { data: { v: '2' } }, contentType: 'application/merge-patch+json' });
      await kubeJson(server, 'DELETE', cmPath('inf-2'));
      await eventually('informer events', async () => (seen.length >= 4 ? true : undefined), 20_000);
      assert.deepEqual(seen, ['add inf-1 1', 'add inf-2 1', 'update inf-1 2', 'delete inf-2']);
      assert.deepEqual(
        informer.list(NS).map((o) => o.metadata?.name),
        ['inf-1'],
      );
    } finally {
      await informer.stop();
    }
  });
};
