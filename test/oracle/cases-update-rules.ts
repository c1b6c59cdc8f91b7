/**
 * PUT without metadata.resourceVersion, kind by kind: the stand-in's `allowUnconditionalUpdate`
 * flags must give the answer the real server gives (200 overwrite, or 422 for Leases, CRDs and
 * custom resources, whose strategies refuse blind writes). Every built-in kind the stand-in serves
 * is covered, except the two 1.20 does not serve in the same version.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { builtinTypes } from '../../local/apiserver/schema/builtins.js';
import { crdType, typesOf } from '../../local/apiserver/schema/crd.js';
import { apiVersionOf, type ResourceType } from '../../local/apiserver/schema/resources.js';
import type { KubeObject } from '../../local/apiserver/types.js';
import { databaseCrd } from '../local/apiserver/fixtures.js';
import { kubeJson } from '../support/kube.js';
import { eventually, NS, type CaseModule } from './context.js';
import type { ContractServer } from './targets.js';

const template = { metadata: { labels: { app: 'uncond' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
const workload = { selector: { matchLabels: { app: 'uncond' } }, template };
const roleRef = (kind: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name: 'r' });

/** A valid object (without apiVersion, kind and name) per plural. */
const samples: Record<string, Record<string, unknown>> = {
  namespaces: {},
  configmaps: { data: { v: '1' } },
  secrets: { stringData: { v: '1' } },
  services: { spec: { ports: [{ port: 80 }] } },
  endpoints: { subsets: [] },
  events: {
    involvedObject: { kind: 'ConfigMap', name: 'x', namespace: NS },
    reason: 'R',
    message: 'm',
    type: 'Normal',
    firstTimestamp: '2026-11-22T10:00:00Z',
    lastTimestamp: '2026-11-22T10:00:00Z',
    count: 1,
  },
  pods: template,
  persistentvolumeclaims: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  persistentvolumes: { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/keelson-uncond' } } },
  storageclasses: { provisioner: 'example.com/uncond' },
  serviceaccounts: {},
  nodes: {},
  deployments: { spec: workload },
  statefulsets: { spec: { ...workload, serviceName: 'uncond' } },
  replicasets: { spec: workload },
  controllerrevisions: { revision: 1, data: { spec: {} } },
  leases: { spec: { holderIdentity: 'a' } },
  roles: { rules: [] },
  rolebindings: { roleRef: roleRef('Role') },
  clusterroles: { rules: [] },
  clusterrolebindings: { roleRef: roleRef('ClusterRole') },
};
/** Served by the stand-in in versions 1.20 lacks (policy/v1, discovery.k8s.io/v1). */
const notOn120 = new Set(['poddisruptionbudgets', 'endpointslices']);

const collectionPath = (type: Pick<ResourceType, 'group' | 'version' | 'plural' | 'namespaced'>): string =>
  `${type.group ? `/apis/${type.group}/${type.version}` : '/api/v1'}${type.namespaced ? `/namespaces/${NS}` : ''}/${type.plural}`;

/** Creates the object, PUTs it back without resourceVersion, deletes it; returns the PUT status. */
async function blindPut(server: ContractServer, type: ResourceType, name: string, sample: Record<string, unknown>): Promise<string> {
  const path = collectionPath(type);
  const created = await kubeJson(server, 'POST', path, {
    body: { apiVersion: apiVersionOf(type), kind: type.kind, ...sample, metadata: { ...(sample.metadata as object), name } },
  });
  assert.equal(created.status, 201, `${type.plural}: ${created.text}`);
  const body = created.body as unknown as KubeObject;
  delete body.metadata.resourceVersion;
  const put = await kubeJson(server, 'PUT', `${path}/${name}`, { body });
  const answer = put.status === 422 ? `422 ${String(put.body.message).replace(/^.*?(metadata\.resourceVersion)/, '$1')}` : String(put.status);
  await kubeJson(server, 'DELETE', `${path}/${name}`);
  return answer;
}

const expected = (type: ResourceType): string =>
  type.allowUnconditionalUpdate ? '200' : '422 metadata.resourceVersion: Invalid value: 0x0: must be specified for an update';

/**
 * 1.20's hand-written Service REST storage demanded a resourceVersion; current Kubernetes serves
 * Services from the generic store, whose Service strategy allows unconditional updates. The
 * stand-in follows current Kubernetes (ADR 0700), so only the 1.20 answer differs here.
 */
const only120: Record<string, string> = { services: '422 metadata.resourceVersion: Invalid value: "": must be specified for an update' };

export const updateRuleCases: CaseModule = (ctx) => {
  it('PUT without resourceVersion: 200 for most built-in kinds, 422 for Leases (per-kind flag agrees with the server)', async () => {
    const { server } = ctx();
    const served = builtinTypes.filter((t) => !notOn120.has(t.plural));
    assert.deepEqual(served.map((t) => t.plural).sort(), Object.keys(samples).sort(), 'every built-in kind has a sample');
    const got: Record<string, string> = {};
    const want: Record<string, string> = {};
    for (const type of served) {
      got[type.plural] = await blindPut(server, type, type.namespaced ? 'uncond' : 'keelson-uncond', samples[type.plural]);
      want[type.plural] = (ctx().target.real ? only120[type.plural] : undefined) ?? expected(type);
    }
    assert.deepEqual(got, want);
    assert.equal(want.leases.slice(0, 3), '422');
    assert.equal(want.configmaps, '200');
    const noData = await kubeJson(server, 'POST', collectionPath(served.find((t) => t.plural === 'controllerrevisions')!), {
      body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'no-data' }, revision: 1 },
    });
    assert.equal(noData.status, 422, 'a ControllerRevision needs data');
  });

  it('PUT without resourceVersion: 422 for a CustomResourceDefinition and for a custom resource', async () => {
    const { server } = ctx();
    const crd = databaseCrd({ group: 'uncond.keelson.io', plural: 'things', kind: 'Thing' });
    const thingType = typesOf(crd as unknown as KubeObject)[0];
    const thingPath = collectionPath(thingType);
    assert.equal((await kubeJson(server, 'POST', collectionPath(crdType), { body: crd })).status, 201);
    try {
      await eventually('things served', async () => ((await kubeJson(server, 'GET', thingPath)).status === 200 ? true : undefined), 30_000);
      const thing = await blindPut(server, thingType, 'uncond', { spec: { instances: 1 } });
      assert.equal(thing, expected(thingType));
      const crdAnswer = await kubeJson(server, 'PUT', `${collectionPath(crdType)}/${crd.metadata.name}`, {
        body: { ...crd, metadata: { name: crd.metadata.name } },
      });
      assert.equal(crdAnswer.status, crdType.allowUnconditionalUpdate ? 200 : 422, crdAnswer.text);
      assert.equal(thing.slice(0, 3), '422');
    } finally {
      await kubeJson(server, 'DELETE', `${collectionPath(crdType)}/${crd.metadata.name}`);
    }
  });
};
