import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StorageV1Api, type KubernetesObject, type V1Secret, type V1StatefulSet } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.js';
import { mergePatch } from '../../local/controllers/kube.js';
import { group, plural, version } from '../../api/crd/types.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { Finalizer } from '../../api/naming.js';
import { runOperator, type RunningOperator } from '../../operator/run.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCrds, createInstancePod, eventually, kubectl, metricValue, publishEndpoint, writesDuringIdlePasses } from './support.js';

const ns = 'db';
const logger = createLogger({ name: 'operator-test', level: process.env.LOG_LEVEL ?? 'silent' });

describe('operator against the API server stand-in', () => {
  let server: TestApiServer;
  let api: OperatorKubeApi;
  let operator: RunningOperator;
  let cacheDir: string;
  let celSupported = false;

  const getCluster = (name: string) => api.readCluster(ns, name);
  const createClaim = async (ordinal: number, storageClassName?: string): Promise<string> => {
    const name = `pgdata-demo-${ordinal}`;
    await api.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name, labels: { 'keelson.io/cluster': 'demo', 'app.kubernetes.io/component': 'database' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName },
      },
    });
    return name;
  };
  const bindClaim = async (name: string): Promise<string> => {
    await api.core.patchNamespacedPersistentVolumeClaimStatus({ namespace: ns, name, body: { status: { phase: 'Bound' } } }, mergePatch);
    return name;
  };
  const createCluster = (name: string, spec: Record<string, unknown>) =>
    api.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: { apiVersion: `${group}/${version}`, kind: 'DatabaseCluster', metadata: { name }, spec },
    });

  before(async () => {
    server = await startTestApiServer();
    cacheDir = mkdtempSync(join(tmpdir(), 'keelson-kubectl-'));
    api = new OperatorKubeApi(server.kubeConfig);
    celSupported = await applyCrds(server.kubeconfigPath, cacheDir);
    await api.core.createNamespace({ body: { metadata: { name: ns } } });
    operator = await runOperator({
      kubeconfig: server.kubeconfigPath,
      namespaces: [ns],
      leaderElect: true,
      leaseNamespace: 'default',
      leaseName: 'keelson-operator',
      identity: 'test-operator',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      relistIntervalMs: 1_000,
      operatorVersion: '0.0.0-test',
      logger,
    });
  });

  after(async () => {
    await operator?.stop();
    await server?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('becomes leader on the Lease and reports ready', async () => {
    await eventually('leadership', async () => operator.isLeader());
    const lease = await api.coordination.readNamespacedLease({ namespace: 'default', name: 'keelson-operator' });
    assert.equal(lease.spec?.holderIdentity, 'test-operator');
    assert.equal(lease.spec?.leaseDurationSeconds, 15);
    await eventually('readyz', async () => (await fetch(`${operator.healthUrl}/readyz`)).status === 200);
    assert.equal((await fetch(`${operator.healthUrl}/healthz`)).status, 200);
  });

  it('creates every owned object for a new cluster, with owner references', async () => {
    await createCluster('demo', { instances: 3 });
    const sts = await eventually('StatefulSet', () =>
      api.read<V1StatefulSet>({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo', namespace: ns } }),
    );
    assert.equal(sts.spec?.replicas, 3);
    const cluster = (await getCluster('demo'))!;
    const expected: Array<[string, string, string]> = [
      ['v1', 'ServiceAccount', 'demo'],
      ['rbac.authorization.k8s.io/v1', 'Role', 'demo'],
      ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'demo'],
      ['v1', 'ConfigMap', 'demo-config'],
      ['v1', 'Service', 'demo-rw'],
      ['v1', 'Service', 'demo-ro'],
      ['v1', 'Service', 'demo-r'],
      ['v1', 'Service', 'demo-headless'],
      ['policy/v1', 'PodDisruptionBudget', 'demo'],
      ['v1', 'Secret', 'demo-superuser'],
      ['v1', 'Secret', 'demo-replication'],
      ['v1', 'Secret', 'demo-app'],
      ['v1', 'Secret', 'demo-api'],
    ];
    for (const [apiVersion, kind, name] of expected) {
      const object = await eventually(`${kind}/${name}`, () => api.read<KubernetesObject>({ apiVersion, kind, metadata: { name, namespace: ns } }));
      assert.equal(object.metadata?.ownerReferences?.[0]?.uid, cluster.metadata?.uid, `${kind}/${name} owned by the cluster`);
    }
    const withStatus = await eventually('status', async () => {
      const c = await getCluster('demo');
      return c?.status?.phase ? c : undefined;
    });
    assert.equal(withStatus.status?.phase, 'Creating');
    assert.ok(withStatus.metadata?.finalizers?.includes(Finalizer), 'the finalizer is set');
    assert.equal(withStatus.status?.selector, 'keelson.io/cluster=demo,app.kubernetes.io/component=database');
  });

  it('writes nothing on idle resyncs', async () => {
    const idle = await writesDuringIdlePasses(operator.metricsUrl, { quietMs: 1_500, timeoutMs: 15_000 });
    assert.ok(idle.before >= 12, 'the write counter counted the creations');
    assert.equal(idle.writes, 0, `idle reconciles wrote to the API: ${idle.which.join(', ')}`);
  });

  it('a spec change rewrites exactly the objects it affects', async () => {
    const writesOf = (kind: string, verb: string) => metricValue(operator.metricsUrl, 'keelson_operator_api_writes_total', `kind="${kind}",verb="${verb}"`);
    const [cmBefore, stsBefore, svcBefore] = await Promise.all([
      writesOf('ConfigMap', 'update'),
      writesOf('StatefulSet', 'update'),
      writesOf('Service', 'update'),
    ]);
    await api.custom.patchNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'demo',
      body: [{ op: 'add', path: '/spec/postgresql/parameters', value: { work_mem: '8MB' } }],
    });
    await eventually('ConfigMap carries the parameter', async () => {
      const cm = await api.core.readNamespacedConfigMap({ namespace: ns, name: 'demo-config' });
      return cm.data?.['ha-node.yaml']?.includes('work_mem') ? cm : undefined;
    });
    await eventually('generation observed', async () => {
      const c = await getCluster('demo');
      return (c?.status as { observedGeneration?: number } | undefined)?.observedGeneration === c?.metadata?.generation;
    });
    assert.equal(await writesOf('ConfigMap', 'update'), cmBefore + 1);
    assert.equal(await writesOf('StatefulSet', 'update'), stsBefore, 'the StatefulSet did not change');
    assert.equal(await writesOf('Service', 'update'), svcBefore, 'no Service changed');
  });

  it('grows Bound data volumes in place when spec.storage.size goes up (the StatefulSet template stays)', async () => {
    // Play the cluster admin (an expandable default StorageClass) and the StatefulSet and volume
    // controllers: one claim per instance, labelled like the template, bound through /status.
    const storage = server.kubeConfig.makeApiClient(StorageV1Api);
    await storage.createStorageClass({
      body: {
        metadata: { name: 'expandable', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'example.com/disk',
        allowVolumeExpansion: true,
      },
    });
    await storage.createStorageClass({ body: { metadata: { name: 'fixed' }, provisioner: 'example.com/disk' } });
    await Promise.all([0, 1].map(async (ordinal) => bindClaim(await createClaim(ordinal))));
    await api.custom.patchNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'demo',
      body: [{ op: 'add', path: '/spec/storage/size', value: '5Gi' }],
    });
    await eventually('claims grown', async () => {
      const claims = (await api.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items;
      return claims.length === 2 && claims.every((c) => c.spec?.resources?.requests?.storage === '5Gi');
    });
    const sts = await api.read<V1StatefulSet>({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo', namespace: ns } });
    assert.equal(sts?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi', 'immutable template untouched');
    const events = await api.core.listNamespacedEvent({ namespace: ns });
    assert.equal(events.items.filter((e) => e.reason === 'VolumeResize').length, 2);
  });

  it('leaves a Pending claim for a later pass and reports a refused growth, without failing reconciles', async () => {
    const errors = () => metricValue(operator.metricsUrl, 'keelson_operator_reconcile_total', 'result="error"');
    const errorsBefore = await errors();
    const pending = await createClaim(2);
    const refused = await bindClaim(await createClaim(3, 'fixed'));
    await api.custom.patchNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: 'demo',
      body: [{ op: 'replace', path: '/spec/storage/size', value: '6Gi' }],
    });
    const sizeOf = async (claim: string) =>
      (await api.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: claim })).spec?.resources?.requests?.storage;
    await eventually('bound claims at 6Gi', async () => (await sizeOf('pgdata-demo-0')) === '6Gi' && (await sizeOf('pgdata-demo-1')) === '6Gi');
    const warning = await eventually('refusal reported', async () =>
      (await api.core.listNamespacedEvent({ namespace: ns })).items.find((e) => e.reason === 'VolumeResizeRefused'),
    );
    assert.match(warning.message ?? '', /^pgdata-demo-3: HTTP 403: .*storageclass that provisions the pvc must support resize/);
    assert.equal(warning.type, 'Warning');
    assert.deepEqual([await sizeOf(pending), await sizeOf(refused)], ['1Gi', '1Gi']);
    assert.equal(await errors(), errorsBefore, 'no reconcile failed on either claim');
    // Once bound, the waiting claim grows on a later pass; the refused one is left to the admin.
    await bindClaim(pending);
    await eventually('pending claim grown once bound', async () => (await sizeOf(pending)) === '6Gi');
    // That later pass met the same refusal again: counted on the one Event, not a new Event per pass.
    const refusals = await eventually('the repeated refusal counted', async () => {
      const found = (await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'VolumeResizeRefused');
      return found.length === 1 && (found[0]!.count ?? 0) >= 2 ? found : undefined;
    });
    assert.ok(new Date(refusals[0]!.lastTimestamp!).getTime() > new Date(refusals[0]!.firstTimestamp!).getTime(), 'lastTimestamp moves on');
    await api.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: refused });
  });

  it('reports pods, primary and readiness in status and printer columns', async () => {
    await createInstancePod(api, ns, 'demo', 0, 'primary', 'rev1', false);
    await createInstancePod(api, ns, 'demo', 1, 'replica');
    await createInstancePod(api, ns, 'demo', 2, 'replica');
    // Every pod Ready and labelled, but demo-rw's endpoints not published yet: not Ready, and says why.
    const pending = await eventually('Ready=False EndpointsPending', async () => {
      const c = await getCluster('demo');
      const ready = (c?.status as { conditions?: Array<{ type: string; reason: string; message: string }> } | undefined)?.conditions?.find(
        (x) => x.type === 'Ready',
      );
      return ready?.reason === 'EndpointsPending' ? { phase: (c?.status as { phase?: string }).phase, ready } : undefined;
    });
    assert.equal(pending.phase, 'Creating');
    assert.match(pending.ready.message, /demo-rw's endpoints do not list demo-0 \(127\.255\.255\.254\) yet/);
    await publishEndpoint(api, ns, 'demo-rw', '127.255.255.254');
    const healthy = await eventually('Healthy', async () => {
      const c = await getCluster('demo');
      return c?.status?.phase === 'Healthy' ? c : undefined;
    });
    const status = healthy.status as { currentPrimary: string; readyInstances: number; conditions: Array<{ type: string; status: string }> };
    assert.equal(status.currentPrimary, 'demo-0');
    assert.equal(status.readyInstances, 3);
    assert.equal(status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
    const table = await kubectl(server.kubeconfigPath, cacheDir, 'get', 'dbc', '-n', ns);
    assert.match(table, /NAME\s+INSTANCES\s+READY\s+PRIMARY\s+PHASE\s+DISK\s+AGE/);
    assert.match(table, /demo\s+3\s+3\s+demo-0\s+Healthy/);
  });

  it('scales through the scale subresource and never rotates Secrets', async () => {
    const secretBefore = (await api.core.readNamespacedSecret({ namespace: ns, name: 'demo-superuser' })) as V1Secret;
    await kubectl(server.kubeconfigPath, cacheDir, 'scale', 'dbc/demo', '-n', ns, '--replicas=5');
    await eventually(
      'StatefulSet at 5',
      async () =>
        (await api.read<V1StatefulSet>({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo', namespace: ns } }))?.spec?.replicas === 5,
    );
    const secretAfter = await api.core.readNamespacedSecret({ namespace: ns, name: 'demo-superuser' });
    assert.equal(secretAfter.data?.password, secretBefore.data?.password);
    assert.equal(secretAfter.metadata?.resourceVersion, secretBefore.metadata?.resourceVersion);
    const events = await api.core.listNamespacedEvent({ namespace: ns });
    assert.ok(
      events.items.some((e) => e.reason === 'Scaling' && e.involvedObject.name === 'demo'),
      'a Scaling event was recorded',
    );
  });

  it('holds a scale-down that would remove the primary', async () => {
    // demo-0 is primary; make demo-4 the primary instead and scale to 2: the StatefulSet must keep 5.
    await api.core.patchNamespacedPod({
      namespace: ns,
      name: 'demo-0',
      body: [{ op: 'replace', path: '/metadata/labels/keelson.io~1role', value: 'replica' }],
    });
    await createInstancePod(api, ns, 'demo', 3, 'replica');
    await createInstancePod(api, ns, 'demo', 4, 'primary');
    await eventually('primary demo-4', async () => (await getCluster('demo'))?.status?.currentPrimary === 'demo-4');
    await kubectl(server.kubeconfigPath, cacheDir, 'scale', 'dbc/demo', '-n', ns, '--replicas=2');
    await eventually('generation observed', async () => {
      const c = await getCluster('demo');
      return (c?.status as { observedGeneration?: number } | undefined)?.observedGeneration === c?.metadata?.generation;
    });
    const sts = await api.read<V1StatefulSet>({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo', namespace: ns } });
    assert.equal(sts?.spec?.replicas, 5, 'scale-down waits for a switchover away from demo-4');
  });

  it('reports the missing ServiceMonitor API once, then creates the ServiceMonitor when its CRD appears', async () => {
    const { ApiextensionsV1Api, CustomObjectsApi } = await import('@kubernetes/client-node');
    await createCluster('watched', { instances: 1, monitoring: { serviceMonitor: { enabled: true, labels: { release: 'prom' }, interval: '15s' } } });
    const fallback = async () =>
      ((await getCluster('watched'))?.status as { conditions?: Array<{ type: string; status: string; message: string }> } | undefined)?.conditions?.find(
        (c) => c.type === 'ApiFallback',
      );
    const missing = await eventually('ApiFallback True', async () => ((await fallback())?.status === 'True' ? fallback() : undefined));
    assert.match(missing!.message, /ServiceMonitor not created/);
    const fallbackEvents = async () =>
      (await api.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.involvedObject.name === 'watched' && e.reason === 'ApiFallback');
    await new Promise((r) => setTimeout(r, 2_500)); // a few more passes (relist every second)
    assert.equal((await fallbackEvents()).length, 1, 'one Event, not one per pass');
    await server.kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({
      body: {
        metadata: { name: 'servicemonitors.monitoring.coreos.com' },
        spec: {
          group: 'monitoring.coreos.com',
          scope: 'Namespaced',
          names: { kind: 'ServiceMonitor', plural: 'servicemonitors', singular: 'servicemonitor', listKind: 'ServiceMonitorList' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }],
        },
      },
    });
    const custom = server.kubeConfig.makeApiClient(CustomObjectsApi);
    const monitor = (await eventually('ServiceMonitor', () =>
      custom
        .getNamespacedCustomObject({ group: 'monitoring.coreos.com', version: 'v1', namespace: ns, plural: 'servicemonitors', name: 'watched' })
        .catch(() => undefined),
    )) as {
      metadata: { labels: Record<string, string>; ownerReferences: Array<{ name: string }> };
      spec: { endpoints: Array<{ port: string; interval: string }> };
    };
    assert.equal(monitor.metadata.labels.release, 'prom');
    assert.equal(monitor.metadata.ownerReferences[0]?.name, 'watched');
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => [e.port, e.interval]),
      [
        ['ha', '15s'],
        ['exporter', '15s'],
      ],
    );
    await eventually('ApiFallback False', async () => (await fallback())?.status === 'False');
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'watched' });
  });

  it('rolls pods to a new revision replicas first and never deletes the primary while replicas are outdated', async () => {
    const { AppsV1Api } = await import('@kubernetes/client-node');
    const apps = server.kubeConfig.makeApiClient(AppsV1Api);
    await createCluster('roll', { instances: 3 });
    await eventually('StatefulSet roll', () => apps.readNamespacedStatefulSet({ namespace: ns, name: 'roll' }).catch(() => undefined));
    await createInstancePod(api, ns, 'roll', 0, 'primary', 'rev1');
    await createInstancePod(api, ns, 'roll', 1, 'replica', 'rev1');
    await createInstancePod(api, ns, 'roll', 2, 'replica', 'rev1');
    // Play the StatefulSet controller: the template changed, so there is a new update revision.
    const sts = await apps.readNamespacedStatefulSet({ namespace: ns, name: 'roll' });
    sts.status = { ...sts.status, replicas: 3, updateRevision: 'rev2', currentRevision: 'rev1' };
    await apps.replaceNamespacedStatefulSetStatus({ namespace: ns, name: 'roll', body: sts });
    const podNames = async () =>
      (await api.core.listNamespacedPod({ namespace: ns, labelSelector: 'keelson.io/cluster=roll' })).items.map((p) => p.metadata!.name!).sort();
    await eventually('roll-2 replaced first', async () => !(await podNames()).includes('roll-2'));
    assert.deepEqual(await podNames(), ['roll-0', 'roll-1'], 'one pod at a time, the highest-ordinal replica first');
    await createInstancePod(api, ns, 'roll', 2, 'replica', 'rev2');
    await eventually('roll-1 replaced next', async () => !(await podNames()).includes('roll-1'));
    await createInstancePod(api, ns, 'roll', 1, 'replica', 'rev2');
    // Only the primary is outdated now: the next step is a switchover (ha-node is not running here), never a delete.
    await new Promise((r) => setTimeout(r, 2_000));
    assert.deepEqual(await podNames(), ['roll-0', 'roll-1', 'roll-2'], 'the primary is not deleted before a switchover');
    const phase = (await getCluster('roll'))?.status as { phase?: string; targetPrimary?: string } | undefined;
    assert.equal(phase?.phase, 'Updating');
    assert.equal(phase?.targetPrimary, 'roll-1', 'the switchover candidate is an updated replica');
    const events = await api.core.listNamespacedEvent({ namespace: ns });
    assert.equal(events.items.filter((e) => e.reason === 'RollingUpdate' && e.involvedObject.name === 'roll').length, 2);
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'roll' });
  });

  it('rejects invalid specs with clear messages (API server schema, CEL, operator condition)', async () => {
    await assert.rejects(createCluster('bad', { instances: 0 }), (err: Error) => /instances/.test(String((err as { body?: string }).body ?? err.message)));
    const crossField: Array<[string, Record<string, unknown>, RegExp]> = [
      ['bad-ttl', { ha: { ttl: 10, loopWait: 10, retryTimeout: 10 } }, /loopWait \+ 2\*retryTimeout must be <= ttl/],
      ['bad-sync', { instances: 2, ha: { synchronousMode: 'on', synchronousNodeCount: 2 } }, /synchronousNodeCount must be less than instances/],
    ];
    const refusedByOperator = async (name: string, spec: Record<string, unknown>, message: RegExp) => {
      await createCluster(name, spec);
      const refused = await eventually(`${name} InvalidSpec`, async () => {
        const c = await getCluster(name);
        const ready = (c?.status as { conditions?: Array<{ type: string; reason: string; message: string }> } | undefined)?.conditions?.find(
          (x) => x.type === 'Ready',
        );
        return ready?.reason === 'InvalidSpec' ? ready : undefined;
      });
      assert.match(refused.message, message);
      const events = await api.core.listNamespacedEvent({ namespace: ns });
      assert.ok(
        events.items.some((e) => e.reason === 'InvalidSpec' && e.involvedObject.name === name && e.type === 'Warning'),
        `an InvalidSpec Warning for ${name}`,
      );
      assert.equal(
        await api.read({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: ns } }),
        undefined,
        'nothing built for an invalid spec',
      );
      await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name });
    };
    for (const [name, spec, message] of crossField) {
      // CEL rules reject at admission; a server without CEL lets them through and the operator refuses them.
      if (celSupported) await assert.rejects(createCluster(name, spec), (err: Error) => message.test(String((err as { body?: string }).body ?? err.message)));
      else await refusedByOperator(name, spec, message);
    }
    // Schema patterns hold on every server, CEL or not: quantities and names are refused at admission, naming the field.
    const refusedBody = (field: RegExp) => (err: Error) => field.test(String((err as { body?: string }).body ?? err.message));
    await assert.rejects(createCluster('bad-quantity', { resources: { limits: { cpu: 'fast' } } }), refusedBody(/spec\.resources\.limits\.cpu/));
    await assert.rejects(createCluster('a.b', {}), refusedBody(/metadata\.name: Invalid value: \\"a\.b\\"/));
  });

  it('shows a write the API server refuses in status (Applied=False) and as one Warning Event, and recovers', async () => {
    type Conditions = { conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
    const appliedOf = async (name: string) => ((await getCluster(name))?.status as Conditions | undefined)?.conditions?.find((c) => c.type === 'Applied');
    // An immutable ConfigMap already holds the name the cluster's configuration needs: every replace is refused (422).
    await api.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'locked-config' }, immutable: true, data: { stale: 'yes' } } });
    await createCluster('locked', { instances: 1 });
    const refused = await eventually('Applied=False', async () => {
      const applied = await appliedOf('locked');
      return applied?.status === 'False' ? applied : undefined;
    });
    assert.equal(refused.reason, 'Refused');
    assert.match(refused.message, /^HTTP 422: ConfigMap "locked-config" is invalid: .*immutable/);
    assert.equal((await getCluster('locked'))?.status?.phase, 'Pending');
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // a few more refused passes
    const warnings = (await api.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.reason === 'ApplyRefused' && e.involvedObject.name === 'locked',
    );
    assert.equal(warnings.length, 1, 'one Event however often the pass is refused');
    assert.equal(warnings[0]?.type, 'Warning');
    assert.equal(warnings[0]?.message, refused.message);
    await api.core.deleteNamespacedConfigMap({ namespace: ns, name: 'locked-config' });
    const recovered = await eventually(
      'Applied=True',
      async () => {
        const applied = await appliedOf('locked');
        return applied?.status === 'True' ? applied : undefined;
      },
      30_000,
    );
    assert.equal(recovered.reason, 'AllObjectsApplied');
    assert.ok(
      await api.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'locked-config', namespace: ns } }),
      'the ConfigMap is written once the cause is gone',
    );
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'locked' });
  });

  it("deletion removes the cluster's DCS Leases and nothing else", async () => {
    await createCluster('gone', { instances: 1 });
    await eventually('finalizer', async () => (await getCluster('gone'))?.metadata?.finalizers?.includes(Finalizer));
    const lease = (name: string, labels: Record<string, string> = {}) =>
      api.coordination.createNamespacedLease({ namespace: ns, body: { metadata: { name, namespace: ns, labels }, spec: { holderIdentity: 'x' } } });
    await lease('gone-leader');
    await lease('gone-config', { 'keelson.io/cluster': 'gone' });
    await lease('gone-member-gone-0', { 'keelson.io/cluster': 'gone' });
    await lease('demo-leader', { 'keelson.io/cluster': 'demo' });
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'gone' });
    await eventually('cluster gone', async () => (await getCluster('gone')) === undefined);
    const names = (await api.listLeases(ns)).map((l) => l.metadata?.name).sort();
    assert.deepEqual(names, ['demo-leader']);
  });

  // A member still shutting down writes its Leases again: they may go only once its pod is gone,
  // and a pod this operator deleted stays in its view while it terminates.
  it('deletion keeps the DCS Leases and the finalizer while an instance pod still terminates', async () => {
    await createCluster('slow', { instances: 1 });
    await eventually('finalizer', async () => (await getCluster('slow'))?.metadata?.finalizers?.includes(Finalizer));
    await createInstancePod(api, ns, 'slow', 0, 'primary', 'rev1', false);
    // A finalizer keeps the deleted pod terminating, as a kubelet does until its containers stopped.
    await api.core.patchNamespacedPod({ namespace: ns, name: 'slow-0', body: { metadata: { finalizers: ['keelson.io/test-terminating'] } } }, mergePatch);
    await api.coordination.createNamespacedLease({
      namespace: ns,
      body: { metadata: { name: 'slow-member-slow-0', namespace: ns, labels: { 'keelson.io/cluster': 'slow' } }, spec: { holderIdentity: 'slow-0' } },
    });
    await api.custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural, name: 'slow' });
    await eventually(
      'the pod terminating',
      async () => (await api.core.readNamespacedPod({ namespace: ns, name: 'slow-0' })).metadata?.deletionTimestamp !== undefined,
    );
    // Several passes (one a second while pods terminate).
    await new Promise((r) => setTimeout(r, 3500));
    assert.ok(await getCluster('slow'), 'the finalizer stays while the pod terminates');
    assert.deepEqual(
      (await api.listLeases(ns)).map((l) => l.metadata?.name).filter((n) => n?.startsWith('slow-')),
      ['slow-member-slow-0'],
      'the Leases stay while the pod terminates',
    );
    await api.core.patchNamespacedPod({ namespace: ns, name: 'slow-0', body: { metadata: { finalizers: null } } }, mergePatch);
    await eventually('cluster gone', async () => (await getCluster('slow')) === undefined, 30_000);
    assert.deepEqual(
      (await api.listLeases(ns)).map((l) => l.metadata?.name).filter((n) => n?.startsWith('slow-')),
      [],
    );
  });

  it('exposes reconcile, queue, duration and leader metrics', async () => {
    const metrics = await (await fetch(`${operator.metricsUrl}/metrics`)).text();
    assert.match(metrics, /keelson_operator_workqueue_depth \d/);
    assert.match(metrics, /keelson_operator_reconcile_duration_seconds_bucket/);
    assert.match(metrics, /keelson_operator_leader 1/);
  });

  it('/readyz fails while the watches hear nothing for three relist intervals, and recovers', async () => {
    assert.equal((await fetch(`${operator.healthUrl}/readyz`)).status, 200);
    server.faults.pause('unavailable');
    try {
      const body = await eventually(
        'readyz 503',
        async () => {
          const res = await fetch(`${operator.healthUrl}/readyz`);
          return res.status === 503 ? res.text() : undefined;
        },
        8_000,
      );
      assert.match(body, /silent for 3 relist intervals/);
    } finally {
      server.faults.resume();
    }
    await eventually('readyz 200 again', async () => (await fetch(`${operator.healthUrl}/readyz`)).status === 200, 10_000);
    assert.ok(operator.isLeader(), 'a short outage (below the renew deadline) keeps leadership');
  });
});
