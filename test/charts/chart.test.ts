import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { V1ClusterRole, V1Deployment, V1PolicyRule } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { OperatorPaths, Ports, AdminPaths } from '../../lib/ports.js';
import { allCrds } from '../../api/crd/all-crds.js';
import { createOperatorMetrics } from '../../operator/metrics.js';
import { operatorRules, rulesCover } from '../../operator/rbac.js';
import { chartDir, renderChart, type K8sDoc } from './render.js';

const kinds = (docs: K8sDoc[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
const find = <T>(docs: K8sDoc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name) as unknown as T;
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('charts/keelson', () => {
  const defaults = renderChart();

  it('renders the operator, its RBAC, PDB and test hook, the CRDs and the dashboard by default', () => {
    assert.deepEqual(kinds(defaults), [
      'ClusterRole/keelson-operator', 'ClusterRoleBinding/keelson-operator', 'ConfigMap/keelson-dashboard', 'CustomResourceDefinition/backups.keelson.io', 'CustomResourceDefinition/databaseclusters.keelson.io',
      'CustomResourceDefinition/databases.keelson.io',
      'Deployment/keelson-operator', 'Pod/keelson-test-operator', 'PodDisruptionBudget/keelson-operator', 'Role/keelson-leader-election', 'RoleBinding/keelson-leader-election',
      'Service/keelson-operator-metrics', 'ServiceAccount/keelson',
    ]);
    for (const doc of defaults) {
      assert.ok(doc.apiVersion && doc.kind && doc.metadata.name, 'every object has apiVersion, kind and name');
      const clusterScoped = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition'].includes(doc.kind);
      assert.equal(doc.metadata.namespace === undefined, clusterScoped, `${doc.kind} namespace`);
      assert.equal(doc.metadata.labels?.['app.kubernetes.io/instance'], 'keelson');
    }
  });

  it('templates the generated CRD unchanged (so helm upgrade updates it) and keeps it on uninstall', () => {
    for (const generated of allCrds()) {
      const crd = find<K8sDoc & { spec: unknown }>(defaults, 'CustomResourceDefinition', generated.metadata!.name!);
      assert.deepEqual(crd.spec, JSON.parse(JSON.stringify(generated.spec)));
      assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    }
    assert.ok(!kinds(renderChart({ crds: { install: false } })).some((k) => k.startsWith('CustomResourceDefinition')), 'crds.install=false leaves the CRD out');
  });

  it('runs the operator with the ports, paths and image version of the code', () => {
    const chart = parse(readFileSync(`${chartDir}/Chart.yaml`, 'utf8')) as { appVersion: string };
    assert.equal(chart.appVersion, pkg.version);
    const deployment = find<V1Deployment>(defaults, 'Deployment', 'keelson-operator');
    const container = deployment.spec!.template.spec!.containers[0]!;
    assert.equal(container.image, `ghcr.io/keelson/keelson:${pkg.version}`);
    assert.deepEqual(container.args?.slice(0, 3), ['operator', `--health-address=:${Ports.operatorHealth}`, `--metrics-address=:${Ports.operatorMetrics}`]);
    assert.equal(container.livenessProbe?.httpGet?.path, OperatorPaths.healthz);
    assert.equal(container.readinessProbe?.httpGet?.path, OperatorPaths.readyz);
    assert.deepEqual(container.ports?.map((p) => p.containerPort), [Ports.operatorHealth, Ports.operatorMetrics]);
    const env = new Map(container.env?.map((e) => [e.name, e]));
    assert.equal(env.get('WATCH_NAMESPACE')?.value, '');
    assert.equal(env.get('POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath, 'metadata.namespace');
    assert.equal(deployment.spec?.replicas, 2);
    assert.equal(deployment.spec?.template.spec?.securityContext?.runAsNonRoot, true);
    assert.deepEqual(deployment.spec?.template.spec?.securityContext?.seccompProfile, { type: 'RuntimeDefault' });
    assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const single = find<V1Deployment>(renderChart({ operator: { leaderElection: { enabled: false }, replicas: 3 } }), 'Deployment', 'keelson-operator');
    assert.equal(single.spec?.replicas, 1);
    assert.ok(single.spec?.template.spec?.containers[0]?.args?.includes('--no-leader-elect'), 'a single replica runs without election');
  });

  it('grants the operator exactly what it does and no cluster-wide rights when namespaces are listed', () => {
    const role = find<V1ClusterRole>(defaults, 'ClusterRole', 'keelson-operator');
    assert.deepEqual(rulesCover(role.rules as V1PolicyRule[], operatorRules()), [], 'everything the operator needs');
    assert.deepEqual(rulesCover(operatorRules(), role.rules as V1PolicyRule[]), [], 'nothing it does not need (least privilege)');
    assert.ok(!role.rules!.some((r) => r.verbs.includes('*') || r.resources?.includes('*')), 'no wildcards');
    assert.ok(!role.rules!.some((r) => r.apiGroups?.includes('apiextensions.k8s.io')), 'capabilities come from /apis discovery, not CRD reads');
    const election = find<V1ClusterRole>(defaults, 'Role', 'keelson-leader-election');
    assert.deepEqual(election.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['keelson-operator'], verbs: ['get', 'update'] },
    ], 'leader election: its own Lease only');
    const args = find<V1Deployment>(defaults, 'Deployment', 'keelson-operator').spec!.template.spec!.containers[0]!.args ?? [];
    assert.ok(args.includes('--leader-election-name=keelson-operator'), 'the Deployment uses the Lease the Role names');
    const clusterRoles = defaults.filter((d) => d.kind === 'ClusterRole').map((d) => d.metadata.name);
    assert.deepEqual(clusterRoles, ['keelson-operator'], 'one ClusterRole, bound per namespace when namespaces are listed');

    const scoped = renderChart({ operator: { watchNamespaces: ['team-a', 'team-b'] } });
    const bindings = scoped.filter((d) => d.kind === 'RoleBinding' && d.metadata.name === 'keelson-operator');
    assert.deepEqual(bindings.map((b) => b.metadata.namespace), ['team-a', 'team-b']);
    assert.ok(!scoped.some((d) => d.kind === 'ClusterRoleBinding' && d.metadata.name === 'keelson-operator'), 'no cluster-wide binding when namespaces are listed');
    const container = find<V1Deployment>(scoped, 'Deployment', 'keelson-operator').spec!.template.spec!.containers[0]!;
    assert.equal(container.env?.find((e) => e.name === 'WATCH_NAMESPACE')?.value, 'team-a,team-b');
  });

  it('adds the admin backend only when enabled, and requires its Secret', () => {
    assert.ok(!kinds(defaults).some((k) => k.includes('admin')), 'no admin objects by default');
    assert.throws(() => renderChart({ admin: { enabled: true } }), /admin.existingSecret/);
    const docs = renderChart({ admin: { enabled: true, existingSecret: 'keelson-admin-env', secretKey: 'chart-test-secret-key-0123456789' } });
    const deployment = find<V1Deployment>(docs, 'Deployment', 'keelson-admin');
    const container = deployment.spec!.template.spec!.containers[0]!;
    assert.deepEqual(container.args, ['admin', `--listen=:${Ports.admin}`]);
    assert.equal(container.readinessProbe?.httpGet?.path, AdminPaths.health);
    assert.equal(container.envFrom?.[0]?.secretRef?.name, 'keelson-admin-env');
    assert.ok(find(docs, 'Service', 'keelson-admin'));
  });

  it('creates the ServiceMonitor from values', () => {
    assert.ok(!kinds(defaults).some((k) => k.startsWith('ServiceMonitor')), 'no ServiceMonitor by default');
    const docs = renderChart({ serviceMonitor: { enabled: true, labels: { release: 'prom' }, interval: '15s' } });
    const monitor = find<K8sDoc & { spec: { endpoints: Array<{ port: string; path: string; interval: string }> } }>(docs, 'ServiceMonitor', 'keelson-operator');
    assert.equal(monitor.metadata.labels?.release, 'prom');
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'metrics', path: OperatorPaths.metrics, interval: '15s' }]);
  });

  it('ships a Grafana dashboard whose operator queries use metrics the operator exports', async () => {
    const configMap = find<K8sDoc & { data: Record<string, string> }>(defaults, 'ConfigMap', 'keelson-dashboard');
    assert.equal(configMap.metadata.labels?.grafana_dashboard, '1');
    const dashboard = JSON.parse(configMap.data['keelson.json']!) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    assert.ok(dashboard.panels.length >= 8, `${dashboard.panels.length} panels`);
    const exported = new Set((await createOperatorMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const used = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join(' ').match(/keelson_operator_[a-z_]+/g) ?? [];
    assert.ok(used.length >= 4, `${used.length} operator metrics used`);
    for (const name of used) assert.ok(exported.has(name.replace(/_bucket$/, '')), `${name} is exported by the operator`);
  });
});
