import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1Deployment, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { PoolerPaths, Ports } from '../../lib/ports.js';
import { desiredObjects } from '../../operator/builders/index.js';
import { buildPoolerConfigMap } from '../../operator/builders/pooler-configmap.js';
import { buildPoolerDeployment, poolerConfigHashAnnotation } from '../../operator/builders/pooler-deployment.js';
import { buildPoolerService } from '../../operator/builders/pooler-services.js';
import { buildCredentialSecret, credentialKindsOf } from '../../operator/builders/secrets.js';
import { buildStatefulSet } from '../../operator/builders/statefulset.js';
import { haNodeConfig } from '../../operator/builders/configmap.js';
import { modernCapabilities } from '../../operator/capabilities.js';
import { ConfigKeys, ContainerNames, poolerSelector } from '../../api/naming.js';
import { buildServiceMonitor } from '../../operator/builders/servicemonitor.js';
import { loadPoolerSettings } from '../../sidecar/pooler/config.js';
import { sampleCluster, sampleContext } from './fixtures.js';
import { exporterNodeOptions, podConnectTimeoutMs } from '../../api/exporter/node-options.js';

const enabled = { pooler: { enabled: true } };

describe('pooler builders', () => {
  it('build nothing for the pooler while it is disabled', () => {
    const ctx = sampleContext();
    const names = desiredObjects(ctx, modernCapabilities).map((o) => o.metadata?.name ?? '');
    assert.ok(!names.some((n) => n.includes('pooler')), names.join(','));
    assert.ok(!credentialKindsOf(ctx).includes('pooler'));
    const env = buildStatefulSet(ctx).spec!.template.spec!.containers[0]!.env!.map((e) => e.name);
    assert.ok(!env.some((name) => name.startsWith('KEELSON_POOLER')));
  });

  it('build a ConfigMap, the rw and control Services, a Deployment and a PDB when enabled', () => {
    const ctx = sampleContext(enabled);
    const objects = desiredObjects(ctx, modernCapabilities);
    const pooler = objects.filter((o) => o.metadata?.name?.includes('pooler')).map((o) => `${o.kind}/${o.metadata?.name}`);
    assert.deepEqual(pooler, [
      'ConfigMap/demo-pooler-config',
      'Service/demo-pooler-rw',
      'Service/demo-pooler-control',
      'Deployment/demo-pooler',
      'PodDisruptionBudget/demo-pooler',
    ]);
    const deployment = objects.find((o) => o.kind === 'Deployment') as V1Deployment;
    assert.equal(deployment.spec!.replicas, 2, 'two instances by default');
    const container = deployment.spec!.template.spec!.containers[0]!;
    assert.equal(container.name, ContainerNames.pooler);
    assert.equal(container.image, 'ghcr.io/keelson/keelson:9.9.9', 'the cluster image');
    assert.deepEqual(container.args, ['pooler', '--config', `/etc/keelson/${ConfigKeys.pooler}`]);
    assert.deepEqual(
      container.ports!.map((p) => p.containerPort),
      [Ports.pooler, Ports.poolerControl],
    );
    assert.equal(container.livenessProbe!.httpGet!.path, PoolerPaths.healthz);
    assert.ok(container.env!.some((e) => e.name === 'KEELSON_API_PASSWORD' && e.valueFrom?.secretKeyRef?.name === 'demo-api'));
    // Paths are environment values (a node that maps volumes elsewhere rewrites those, not a file's content).
    const paths = Object.fromEntries(container.env!.filter((e) => e.value).map((e) => [e.name, e.value]));
    assert.equal(paths.KEELSON_POOLER_RUN_DIR, '/var/run/pgbouncer');
    assert.equal(paths.KEELSON_POOLER_PASSWORD_FILE, '/etc/keelson-pooler/password');
    assert.ok(
      container.volumeMounts!.some((m) => m.mountPath === '/var/run/pgbouncer') && container.volumeMounts!.some((m) => m.mountPath === '/etc/keelson-pooler'),
    );
    const selector = deployment.spec!.selector.matchLabels;
    assert.deepEqual(selector, poolerSelector('demo'));
    for (const label of Object.entries(selector!)) assert.equal(deployment.spec!.template.metadata!.labels![label[0]], label[1]);
    const rw = objects.find((o) => o.metadata?.name === 'demo-pooler-rw') as V1Service;
    assert.deepEqual(rw.spec!.selector, selector);
    assert.deepEqual(
      rw.spec!.ports!.map((p) => [p.port, p.targetPort]),
      [[Ports.postgres, Ports.pooler]],
    );
    const control = objects.find((o) => o.metadata?.name === 'demo-pooler-control') as V1Service;
    assert.equal(control.spec!.clusterIP, 'None');
    assert.equal(control.spec!.publishNotReadyAddresses, true, 'a pooler that is not ready yet is still paused');
    const pdb = objects.find((o) => o.metadata?.name === 'demo-pooler') as V1PodDisruptionBudget;
    assert.deepEqual(pdb.spec!.selector!.matchLabels, selector);
  });

  it('tell the database pods how to find the poolers and give them the pooler role password', () => {
    const ctx = sampleContext(enabled);
    const postgres = buildStatefulSet(ctx).spec!.template.spec!.containers[0]!;
    const env = Object.fromEntries(postgres.env!.filter((e) => e.value).map((e) => [e.name, e.value]));
    // The pooler pods from the pod list ha-node watches (no cluster DNS needed), at their control port.
    assert.equal(haNodeConfig(ctx).poolerPods, Ports.poolerControl);
    assert.equal(env.KEELSON_POOLER_PASSWORD_FILE, '/etc/keelson-pooler/password');
    assert.ok(postgres.volumeMounts!.some((m) => m.mountPath === '/etc/keelson-pooler'));
    assert.ok(credentialKindsOf(ctx).includes('pooler'));
    const secret = buildCredentialSecret(ctx, 'pooler', 'pw');
    assert.equal(secret.metadata!.name, 'demo-pooler');
    assert.equal(Buffer.from(secret.data!.username!, 'base64').toString(), 'keelson_pooler');
  });

  it('write a pooler.yaml that `keelson pooler` loads as given', () => {
    const ctx = sampleContext({
      pooler: { enabled: true, mode: 'session', maxClientConnections: 300, defaultPoolSize: 7, parameters: { server_idle_timeout: '30' } },
    });
    const dir = mkdtempSync(join(tmpdir(), 'pooler-config-'));
    try {
      const file = join(dir, 'pooler.yaml');
      writeFileSync(file, buildPoolerConfigMap(ctx).data![ConfigKeys.pooler]!);
      const settings = loadPoolerSettings({ file, env: {} });
      assert.deepEqual(settings.target, { host: 'demo-rw', port: Ports.postgres });
      assert.equal(settings.poolMode, 'session');
      assert.equal(settings.maxClientConnections, 300);
      assert.equal(settings.defaultPoolSize, 7);
      assert.deepEqual(settings.parameters, { server_idle_timeout: '30' });
      assert.equal(settings.authUser, 'keelson_pooler');
      const keys = Object.keys(parse(buildPoolerConfigMap(ctx).data![ConfigKeys.pooler]!) as Record<string, unknown>);
      assert.deepEqual(
        keys.filter((k) => /password/i.test(k)),
        [],
        'no password, nor its path (the Deployment sets that)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("scrape the pooler pods: an exporter on PgBouncer's console as the pooler role, the pooler's own samples, both in the ServiceMonitor", () => {
    const ctx = sampleContext({ ...enabled, monitoring: { serviceMonitor: { enabled: true } } });
    const containers = buildPoolerDeployment(ctx).spec!.template.spec!.containers;
    const exporter = containers.find((c) => c.name === ContainerNames.exporter)!;
    assert.ok(exporter, 'an exporter beside PgBouncer');
    assert.equal(
      exporter.env!.find((e) => e.name === 'PG_EXPORTER_URL')?.value,
      `postgresql://demo-pooler-rw.db.svc:${Ports.pooler}/pgbouncer?hostaddr=$(POD_IP)&sslmode=verify-full&sslrootcert=/etc/keelson-tls/server-ca/ca.crt`,
      'the admin console over TLS, verified by the pooler Service name',
    );
    assert.deepEqual(exporter.volumeMounts, [{ name: 'server-ca', mountPath: '/etc/keelson-tls/server-ca', readOnly: true }], 'the CA alone, no key');
    const readOnlyExporter = buildPoolerDeployment(ctx, true).spec!.template.spec!.containers.find((c) => c.name === ContainerNames.exporter)!;
    assert.match(readOnlyExporter.env!.find((e) => e.name === 'PG_EXPORTER_URL')!.value!, /^postgresql:\/\/demo-pooler-ro\.db\.svc:/);
    assert.equal(exporter.env!.find((e) => e.name === 'PG_EXPORTER_CONNECT_TIMEOUT')?.value, String(podConnectTimeoutMs));
    assert.equal(exporter.env!.find((e) => e.name === 'PGPASSWORD')?.valueFrom?.secretKeyRef?.name, 'demo-pooler');
    assert.equal(exporter.env!.find((e) => e.name === 'NODE_OPTIONS')?.value, exporterNodeOptions);
    const control = buildPoolerService(ctx, 'control');
    assert.deepEqual(
      control.spec!.ports!.map((p) => p.name),
      ['control', 'exporter'],
    );
    const monitor = buildServiceMonitor(ctx);
    assert.deepEqual(monitor.spec.selector.matchExpressions, [
      { key: 'keelson.io/service', operator: 'In', values: ['headless', control.metadata!.labels!['keelson.io/service']!] },
    ]);
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => `${e.port}${e.path}`),
      ['ha/metrics', 'exporter/metrics', `control${PoolerPaths.metrics}`],
    );
    const without = sampleContext({ ...enabled, exporter: { enabled: false } });
    assert.ok(
      !buildPoolerDeployment(without).spec!.template.spec!.containers.some((c) => c.name === ContainerNames.exporter),
      'no exporter when the cluster has none',
    );
  });

  it('roll the pooler pods when their configuration changes', () => {
    const hash = (spec: Record<string, unknown>) =>
      buildPoolerDeployment(sampleContext(spec)).spec!.template.metadata!.annotations![poolerConfigHashAnnotation];
    assert.notEqual(hash({ pooler: { enabled: true, defaultPoolSize: 5 } }), hash({ pooler: { enabled: true, defaultPoolSize: 6 } }));
    assert.equal(hash({ pooler: { enabled: true, instances: 3 } }), hash({ pooler: { enabled: true, instances: 4 } }), 'scaling is no configuration change');
  });

  it('refuse a bad pooler spec with a message naming the field', () => {
    assert.throws(() => sampleCluster({ pooler: { enabled: true, mode: 'statement' } }), /pooler\.mode/);
    assert.throws(() => sampleCluster({ pooler: { enabled: true, instances: 0 } }), /pooler\.instances.*at least 1/);
    assert.throws(() => sampleCluster({ pooler: { enabled: true, parameters: { listen_addr: '0.0.0.0' } } }), /pooler\.parameters\.listen_addr.*listen_addr/);
    assert.throws(() => sampleCluster({ pooler: { enabled: true, parameters: { no_such_setting: '1' } } }), /no_such_setting/);
    assert.equal(sampleCluster({ pooler: { enabled: false, instances: 0 } }).spec.pooler.instances, 0, 'a disabled pooler may have no instances');
  });

  it('build the read-only pooler beside the other: its Deployment, Service -pooler-ro and a PDB with two or more pods', () => {
    const objectsOf = (spec: Record<string, unknown>) => desiredObjects(sampleContext(spec), modernCapabilities);
    const named = (spec: Record<string, unknown>) =>
      objectsOf(spec)
        .filter((o) => o.metadata?.name?.startsWith('demo-pooler-ro'))
        .map((o) => `${o.kind}/${o.metadata?.name}`);
    assert.deepEqual(named(enabled), [], 'nothing read-only unless asked');
    assert.deepEqual(named({ pooler: { enabled: true, readOnly: { enabled: true } } }), [
      'Service/demo-pooler-ro',
      'Service/demo-pooler-ro-control',
      'Deployment/demo-pooler-ro',
      'PodDisruptionBudget/demo-pooler-ro',
    ]);
    assert.deepEqual(
      named({ pooler: { enabled: true, instances: 1, readOnly: { enabled: true } } }),
      ['Service/demo-pooler-ro', 'Service/demo-pooler-ro-control', 'Deployment/demo-pooler-ro'],
      'one pod gets no budget',
    );
    const objects = objectsOf({ pooler: { enabled: true, readOnly: { enabled: true } } });
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === 'demo-pooler-ro') as V1Deployment;
    const selector = deployment.spec!.selector.matchLabels!;
    assert.deepEqual(selector, poolerSelector('demo', true));
    assert.notDeepEqual(selector, poolerSelector('demo'), 'the read-only pods are not the ones ha-node pauses');
    assert.deepEqual(deployment.spec!.template.spec!.containers[0]!.args, ['pooler', '--config', `/etc/keelson/${ConfigKeys.poolerReadOnly}`]);
    const service = objects.find((o) => o.metadata?.name === 'demo-pooler-ro' && o.kind === 'Service') as V1Service;
    assert.deepEqual(service.spec!.selector, selector);
    // Its pods' exporters and control ports are scraped like the others': the ServiceMonitor selects this Service too.
    const control = objects.find((o) => o.metadata?.name === 'demo-pooler-ro-control') as V1Service;
    assert.deepEqual(control.spec!.selector, selector);
    const monitor = buildServiceMonitor(
      sampleContext({ pooler: { enabled: true, readOnly: { enabled: true } }, monitoring: { serviceMonitor: { enabled: true } } }),
    );
    const wanted = monitor.spec.selector.matchExpressions![0]!.values!;
    assert.ok(wanted.includes(control.metadata!.labels!['keelson.io/service']!), 'the ServiceMonitor selects the read-only control Service');
    assert.deepEqual(
      (objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata?.name === 'demo-pooler-ro') as V1PodDisruptionBudget).spec!.selector!.matchLabels,
      selector,
    );
    // It starts at the replicas' Service; ha-node then points it at a streaming replica.
    const config = parse(
      buildPoolerConfigMap(sampleContext({ pooler: { enabled: true, readOnly: { enabled: true } } })).data![ConfigKeys.poolerReadOnly]!,
    ) as Record<string, unknown>;
    assert.equal(config.targetHost, 'demo-ro');
    // The database pods know where the read-only poolers are either way: turning it on rolls only the poolers.
    const template = (spec: Record<string, unknown>) => buildStatefulSet(sampleContext(spec)).spec!.template;
    assert.deepEqual(template(enabled), template({ pooler: { enabled: true, readOnly: { enabled: true } } }));
    assert.equal(haNodeConfig(sampleContext(enabled)).poolerReadOnlyPods, Ports.poolerControl);
  });

  it('refuse a read-only pooler without the pooler, naming the field', () => {
    assert.throws(
      () => sampleCluster({ pooler: { readOnly: { enabled: true } } }),
      /spec\.pooler\.readOnly\.enabled: pooler\.readOnly\.enabled requires pooler\.enabled/,
    );
    assert.throws(() => sampleCluster({ pooler: { enabled: true, readOnly: { enabled: 'yes' } } }), /spec\.pooler\.readOnly\.enabled/);
    assert.equal(sampleCluster({ pooler: { enabled: true, readOnly: { enabled: true } } }).spec.pooler.readOnly.enabled, true);
  });

  it('refuse an unknown PgBouncer setting in the pooler program as well', () => {
    assert.throws(
      () => loadPoolerSettings({ env: { KEELSON_POOLER_TARGET_HOST: 'x', KEELSON_POOLER_PARAMETERS: '{"auth_type":"trust"}' } }),
      /unknown or reserved PgBouncer setting "auth_type"/,
    );
  });
});
