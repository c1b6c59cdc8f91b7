import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesObject, V1PodDisruptionBudget, V1Role, V1Service, V1StatefulSet, V1Secret } from '@kubernetes/client-node';
import { ExporterPaths, HaNodePaths, Ports } from '../../lib/ports.js';
import { desiredObjects } from '../../operator/builders/index.js';
import { buildCredentialSecret, generatePassword } from '../../operator/builders/secrets.js';
import { buildService } from '../../operator/builders/services.js';
import { buildStatefulSet } from '../../operator/builders/statefulset.js';
import { parse } from 'yaml';
import { buildConfigMap } from '../../operator/builders/configmap.js';
import { buildServiceMonitor, podLabelMeta } from '../../operator/builders/servicemonitor.js';
import { serverCertificateHosts } from '../../operator/certificates/server-names.js';
import { desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { sampleCluster } from './fixtures.js';
import { modernCapabilities } from '../../operator/capabilities.js';
import { haNodeRules } from '../../operator/builders/role.js';
import { Labels, Roles, ordinalOf } from '../../api/naming.js';
import { hashOf } from '../../operator/reconcile/hash.js';
import { sampleContext } from './fixtures.js';
import { exporterNodeOptions, podConnectTimeoutMs } from '../../api/exporter/node-options.js';

const all = modernCapabilities;

describe('builders', () => {
  it('build one object per kind, all owned by the cluster and labelled with it', () => {
    const ctx = sampleContext({ monitoring: { serviceMonitor: { enabled: true } } });
    const objects = desiredObjects(ctx, all);
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.name}`),
      [
        'ServiceAccount/demo',
        'Role/demo',
        'RoleBinding/demo',
        'ConfigMap/demo-config',
        'Service/demo-rw',
        'Service/demo-ro',
        'Service/demo-r',
        'Service/demo-headless',
        'StatefulSet/demo',
        'PodDisruptionBudget/demo',
        'ServiceMonitor/demo',
      ],
    );
    for (const object of objects) {
      assert.equal(object.metadata?.namespace, 'db');
      assert.deepEqual(object.metadata?.ownerReferences, [
        { apiVersion: 'keelson.io/v1', kind: 'DatabaseCluster', name: 'demo', uid: ctx.cluster.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.equal(object.metadata?.labels?.[Labels.cluster], 'demo');
    }
  });

  it('leave out the ServiceMonitor unless enabled and its CRD exists', () => {
    const kinds = (spec: Record<string, unknown>, available: boolean) =>
      desiredObjects(sampleContext(spec), { ...all, serviceMonitor: available }).map((o: KubernetesObject) => o.kind);
    assert.ok(!kinds({}, true).includes('ServiceMonitor'), 'not without monitoring enabled');
    assert.ok(!kinds({ monitoring: { serviceMonitor: { enabled: true } } }, false).includes('ServiceMonitor'), 'not without the CRD');
  });

  it('label every scraped member sample with its cluster (scope) and pod (name), as ha-node labels its own', () => {
    const ctx = sampleContext({ monitoring: { serviceMonitor: { enabled: true } } });
    const podLabels = buildStatefulSet(ctx).spec!.template.metadata!.labels!;
    // What Prometheus's Kubernetes discovery gives a target of the headless Service's endpoints.
    const discovered: Record<string, string> = { __meta_kubernetes_pod_name: 'demo-1' };
    for (const [key, value] of Object.entries(podLabels)) discovered[podLabelMeta(key)] = value;
    // ha-node's scope: the cluster name its pod environment gives it.
    const scope = buildStatefulSet(ctx).spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'KEELSON_CLUSTER')?.value;
    const monitor = buildServiceMonitor(ctx);
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => e.port),
      ['ha', 'exporter'],
    );
    for (const endpoint of monitor.spec.endpoints) {
      const target: Record<string, string> = {};
      for (const rule of endpoint.relabelings) target[rule.targetLabel] = rule.sourceLabels.map((l) => discovered[l] ?? '').join(';');
      assert.deepEqual(target, { scope, name: 'demo-1' }, `${endpoint.port} endpoint`);
    }
    assert.equal(monitor.spec.endpoints[0]!.honorLabels, true, "ha-node's own scope and name are kept, not renamed exported_*");
    assert.equal(monitor.spec.endpoints[1]!.honorLabels, false, "a collector's column never replaces the pod's name");
  });

  it("scrape ha-node over HTTPS, verified against the server Secret's CA by a name its certificate carries", () => {
    const ctx = sampleContext({ monitoring: { serviceMonitor: { enabled: true } } });
    const [ha, exporter] = buildServiceMonitor(ctx).spec.endpoints;
    assert.equal(ha!.scheme, 'https');
    const mounted = buildStatefulSet(ctx).spec!.template.spec!.volumes!.find((v) => v.name === 'server-tls')?.secret?.secretName;
    assert.deepEqual(ha!.tlsConfig?.ca, { secret: { name: mounted, key: 'ca.crt' } });
    assert.ok(serverCertificateHosts('demo', ctx.cluster.metadata.namespace).includes(ha!.tlsConfig!.serverName), ha!.tlsConfig!.serverName);
    assert.equal(exporter!.scheme, undefined, 'the exporter still serves HTTP');
  });

  it('write the PodDisruptionBudget in the version the server serves, or leave it out', () => {
    const pdb = (podDisruptionBudget: typeof all.podDisruptionBudget) =>
      desiredObjects(sampleContext(), { ...all, podDisruptionBudget }).find((o) => o.kind === 'PodDisruptionBudget') as V1PodDisruptionBudget | undefined;
    assert.equal(pdb('policy/v1')?.apiVersion, 'policy/v1');
    const old = pdb('policy/v1beta1');
    assert.equal(old?.apiVersion, 'policy/v1beta1');
    assert.deepEqual(old?.spec, pdb('policy/v1')?.spec, 'the same budget in both versions');
    assert.equal(pdb(undefined), undefined);
  });

  it('run every container non-root with the restricted Pod Security profile', () => {
    const ctx = sampleContext({ exporter: { enabled: true, collectors: { configMapName: 'extra' } } });
    const pod = buildStatefulSet(ctx).spec!.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.notEqual(pod.securityContext?.runAsUser, 0);
    assert.deepEqual(pod.securityContext?.seccompProfile, { type: 'RuntimeDefault' });
    assert.deepEqual(
      pod.containers.map((c) => c.name),
      ['postgres', 'exporter'],
    );
    const emptyDirs = new Set(pod.volumes?.filter((v) => v.emptyDir).map((v) => v.name));
    for (const container of pod.containers) {
      assert.deepEqual(
        container.securityContext,
        { allowPrivilegeEscalation: false, runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        container.name,
      );
      // A read-only image needs somewhere to write temporary files.
      assert.ok(
        container.volumeMounts?.some((m) => m.mountPath === '/tmp' && emptyDirs.has(m.name)),
        `${container.name} has a writable /tmp`,
      );
      assert.ok(!container.volumeMounts?.some((m) => m.name === 'config' && !m.readOnly), 'configuration is mounted read-only');
    }
  });

  it('grant ha-node only namespaced rights on what it touches', () => {
    const role = desiredObjects(sampleContext(), all).find((o) => o.kind === 'Role') as V1Role;
    assert.deepEqual(role.rules, haNodeRules());
    for (const rule of role.rules ?? []) {
      assert.ok(!rule.verbs.includes('*') && !(rule.resources ?? []).includes('*') && !(rule.apiGroups ?? []).includes('*'), 'no wildcards');
      assert.ok(!(rule.resources ?? []).some((r) => ['secrets', 'roles', 'rolebindings', 'statefulsets'].includes(r)), 'no secrets, RBAC or workloads');
    }
    const podRule = role.rules?.find((r) => r.resources?.includes('pods'));
    assert.deepEqual(podRule?.verbs, ['list', 'watch', 'patch'], 'pods: labels only, never create or delete');
    const leaseRule = role.rules?.find((r) => r.resources?.includes('leases'));
    assert.ok(!leaseRule?.verbs.includes('delete'), 'only the operator removes DCS Leases (on cluster deletion)');
  });

  it('are pure: the same spec gives the same objects and hashes', () => {
    const a = desiredObjects(sampleContext({ instances: 5 }), all);
    const b = desiredObjects(sampleContext({ instances: 5 }), all);
    assert.deepEqual(a, b);
    assert.deepEqual(a.map(hashOf), b.map(hashOf));
    const c = desiredObjects(sampleContext({ instances: 4 }), all);
    assert.notEqual(hashOf(c.find((o) => o.kind === 'StatefulSet')), hashOf(a.find((o) => o.kind === 'StatefulSet')));
  });

  it('StatefulSet runs ha-node with probes and the exporter sidecar on the ports from lib/ports', () => {
    const sts: V1StatefulSet = buildStatefulSet(sampleContext({ instances: 3, resources: { limits: { memory: '1Gi', cpu: 2 } } }));
    assert.equal(sts.spec?.replicas, 3);
    assert.equal(sts.spec?.updateStrategy?.type, 'OnDelete');
    const pod = sts.spec!.template.spec!;
    const [postgres, exporter] = pod.containers;
    assert.equal(postgres!.name, 'postgres');
    assert.equal(postgres!.image, 'ghcr.io/keelson/keelson:9.9.9');
    assert.equal(postgres!.args?.[0], 'ha-node');
    // ha-node serves its API over HTTPS: the kubelet probes it so (verifying nothing).
    assert.deepEqual(postgres!.livenessProbe?.httpGet, { path: HaNodePaths.liveness, port: Ports.haNodeApi, scheme: 'HTTPS' });
    assert.deepEqual(postgres!.readinessProbe?.httpGet, { path: HaNodePaths.readiness, port: Ports.haNodeApi, scheme: 'HTTPS' });
    assert.deepEqual(postgres!.startupProbe?.httpGet, { path: HaNodePaths.liveness, port: Ports.haNodeApi, scheme: 'HTTPS' });
    assert.ok((postgres!.startupProbe?.failureThreshold ?? 0) * (postgres!.startupProbe?.periodSeconds ?? 0) >= 1800, 'startup budget covers WAL replay');
    assert.equal(postgres!.startupProbe?.periodSeconds, 1, 'ready about a second after ha-node listens, not up to a period later');
    assert.equal(postgres!.readinessProbe?.periodSeconds, 1, 'a new primary that was not ready (a replica catching up) is in -rw within a second');
    assert.equal(
      (postgres!.readinessProbe?.failureThreshold ?? 0) * (postgres!.readinessProbe?.periodSeconds ?? 0),
      6,
      'still 6 s of failures before a pod leaves the Services',
    );
    assert.equal(sts.spec?.podManagementPolicy, 'Parallel', "members start at once; bootstrap order is ha-node's");
    assert.deepEqual(postgres!.resources?.limits, { memory: '1Gi', cpu: '2' });
    const env = new Map(postgres!.env?.map((e) => [e.name, e]));
    for (const name of ['KEELSON_CLUSTER', 'KEELSON_NAMESPACE', 'POD_NAME', 'POD_IP', 'PGDATA', 'KEELSON_SUPERUSER_PASSWORD', 'KEELSON_REPLICATION_PASSWORD']) {
      assert.ok(env.has(name), `env ${name}`);
    }
    assert.equal(env.get('POD_IP')?.valueFrom?.fieldRef?.fieldPath, 'status.podIP');
    assert.equal(env.get('KEELSON_SUPERUSER_PASSWORD')?.valueFrom?.secretKeyRef?.name, 'demo-superuser');
    assert.equal(exporter!.name, 'exporter');
    assert.equal(exporter!.args?.[0], 'exporter');
    // Node's start-up flags for the exporter (interpreter only: ≈ 4 MB less per pod on Node 24).
    assert.equal(exporter!.env?.find((e) => e.name === 'NODE_OPTIONS')?.value, exporterNodeOptions);
    // pg_exporter's 100 ms connect timeout reads a healthy server on a loaded node as down.
    assert.equal(exporter!.env?.find((e) => e.name === 'PG_EXPORTER_CONNECT_TIMEOUT')?.value, String(podConnectTimeoutMs));
    assert.ok(podConnectTimeoutMs >= 1000);
    // PostgreSQL over verify-full against the cluster CA, by the pod's name under the headless Service at the pod's address.
    assert.equal(
      exporter!.env?.find((e) => e.name === 'PG_EXPORTER_URL')?.value,
      'postgresql://$(POD_NAME).demo-headless.db.svc:5432/postgres?hostaddr=$(POD_IP)&sslmode=verify-full&sslrootcert=/etc/keelson-tls/server-ca/ca.crt',
    );
    const caMount = exporter!.volumeMounts?.find((m) => m.mountPath === '/etc/keelson-tls/server-ca');
    const caVolume = pod.volumes?.find((v) => v.name === caMount?.name);
    assert.deepEqual(caVolume?.secret?.items, [{ key: 'ca.crt', path: 'ca.crt' }], 'the CA alone: the exporter never sees the server key');
    assert.equal(caVolume?.secret?.secretName, 'demo-server-tls');
    assert.equal(
      postgres!.env?.find((e) => e.name === 'NODE_OPTIONS'),
      undefined,
      'ha-node keeps its compilers',
    );
    assert.deepEqual(
      exporter!.ports?.map((p) => p.containerPort),
      [Ports.exporter],
    );
    // The exporter's process, not PostgreSQL: a database outage must not restart it or make the pod NotReady.
    assert.deepEqual(exporter!.livenessProbe?.httpGet, { path: ExporterPaths.version, port: Ports.exporter });
    assert.equal(exporter!.readinessProbe, undefined, 'no exporter readiness: it would follow PostgreSQL and remove a primary from -rw');
    assert.equal(exporter!.startupProbe, undefined);
    assert.equal(sts.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(pod.serviceAccountName, 'demo');
  });

  it('puts pg_wal on a claim of its own with walStorage, and nothing of it without', () => {
    const plain = buildStatefulSet({ cluster: sampleCluster(), operatorVersion: '0.1.0' });
    assert.deepEqual(
      plain.spec?.volumeClaimTemplates?.map((t) => t.metadata?.name),
      ['pgdata'],
    );
    assert.equal(
      plain.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'KEELSON_WAL_DIR'),
      undefined,
    );
    const sts = buildStatefulSet({ cluster: sampleCluster({ walStorage: { size: '2Gi', storageClass: 'fast' } }), operatorVersion: '0.1.0' });
    const wal = sts.spec?.volumeClaimTemplates?.find((t) => t.metadata?.name === 'pgwal');
    assert.equal(wal?.spec?.resources?.requests?.storage, '2Gi');
    assert.equal(wal?.spec?.storageClassName, 'fast');
    assert.deepEqual(wal?.metadata?.labels, sts.spec?.volumeClaimTemplates?.[0]?.metadata?.labels, 'selected with the data claims');
    const postgres = sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres');
    assert.deepEqual(
      postgres?.volumeMounts?.find((m) => m.name === 'pgwal'),
      { name: 'pgwal', mountPath: '/var/lib/postgresql/wal' },
    );
    assert.equal(postgres?.env?.find((e) => e.name === 'KEELSON_WAL_DIR')?.value, '/var/lib/postgresql/wal/pg_wal');
    const parameters = (desiredDynamicConfig(sampleCluster({ walStorage: { size: '1Gi' } })).db as { parameters: Record<string, string> }).parameters;
    assert.equal(parameters.max_slot_wal_keep_size, '256MB', 'a quarter of the WAL volume');
  });

  it('adds anti-affinity by default and respects the user choice', () => {
    const preferred = buildStatefulSet(sampleContext()).spec!.template.spec!.affinity;
    assert.equal(preferred?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
    const required = buildStatefulSet(sampleContext({ scheduling: { podAntiAffinity: 'required' } })).spec!.template.spec!.affinity;
    assert.equal(required?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length, 1);
    const none = buildStatefulSet(sampleContext({ scheduling: { podAntiAffinity: 'none', tolerations: [{ key: 'db', operator: 'Exists' }] } })).spec!.template
      .spec!;
    assert.equal(none.affinity, undefined);
    assert.deepEqual(none.tolerations, [{ key: 'db', operator: 'Exists' }]);
    const exporterOff = buildStatefulSet(sampleContext({ exporter: { enabled: false } })).spec!.template.spec!;
    assert.deepEqual(
      exporterOff.containers.map((c) => c.name),
      ['postgres'],
    );
  });

  it('Services select primary, replicas, all and a headless set', () => {
    const ctx = sampleContext();
    const selectors = (['rw', 'ro', 'r'] as const).map((which) => (buildService(ctx, which) as V1Service).spec?.selector?.[Labels.role]);
    assert.deepEqual(selectors, [Roles.primary, Roles.replica, undefined]);
    const headless = buildService(ctx, 'headless');
    assert.equal(headless.spec?.clusterIP, 'None');
    assert.deepEqual(
      headless.spec?.ports?.map((p) => p.port),
      [Ports.postgres, Ports.haNodeApi, Ports.exporter],
    );
  });

  it('Secrets carry the given password (generated ones are long and distinct)', () => {
    const secret: V1Secret = buildCredentialSecret(sampleContext(), 'superuser', 's3cret');
    assert.equal(Buffer.from(secret.data!.password!, 'base64').toString(), 's3cret');
    assert.equal(Buffer.from(secret.data!.username!, 'base64').toString(), 'postgres');
    const a = generatePassword();
    assert.ok(a.length >= 40 && a !== generatePassword(), 'long and never repeated');
  });

  it('ConfigMap seeds the dynamic settings only as bootstrapConfig, equal to what PATCH /config sends', () => {
    const ctx = sampleContext({
      postgresql: { parameters: { max_connections: '200' }, pg_hba: ['host all all 10.0.0.0/8 scram-sha-256'] },
      ha: { ttl: 40, synchronousMode: 'strict' },
      postgresVersion: 16,
    });
    const file = parse(buildConfigMap(ctx).data!['ha-node.yaml']!) as Record<string, unknown>;
    assert.deepEqual(file.bootstrapConfig, desiredDynamicConfig(ctx.cluster));
    assert.equal(file.pgBin, '/usr/lib/postgresql/16/bin');
    // No second, local copy of a dynamic setting: a restarted pod must not bring back a value the spec dropped.
    for (const key of ['ttl', 'loopWait', 'retryTimeout', 'maximumLagOnFailover', 'failsafeMode', 'primaryHangTimeout', 'synchronousMode', 'pgParameters']) {
      assert.ok(!(key in file), `${key} is not a local setting`);
    }
  });

  it('names map pods to ordinals', () => {
    assert.equal(ordinalOf('demo', 'demo-2'), 2);
    assert.equal(ordinalOf('demo', 'demo-x'), undefined);
    assert.equal(ordinalOf('demo', 'demo-ro-1'), undefined);
  });
});
