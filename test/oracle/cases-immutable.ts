/** Immutable fields a reconciler can trip over, checked one by one (each must be 422). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { NS, type CaseModule } from './context.js';
import { kubeJson } from '../support/kube.js';

interface ImmutableCase {
  what: string;
  collection: string;
  object: Record<string, unknown>;
  /** The change to try, given the object as created (so it always differs from what is stored). */
  patch: (created: Record<string, unknown>) => Record<string, unknown>;
}

const labels = { app: 'imm' };
const template = { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };

const cases: ImmutableCase[] = [
  {
    what: 'Deployment spec.selector',
    collection: `/apis/apps/v1/namespaces/${NS}/deployments`,
    object: { metadata: { name: 'imm-deploy' }, spec: { selector: { matchLabels: labels }, template } },
    patch: () => ({ spec: { selector: { matchLabels: { app: 'imm', extra: 'x' } }, template: { metadata: { labels: { app: 'imm', extra: 'x' } } } } }),
  },
  {
    what: 'StatefulSet spec.volumeClaimTemplates',
    collection: `/apis/apps/v1/namespaces/${NS}/statefulsets`,
    object: {
      metadata: { name: 'imm-sts' },
      spec: {
        serviceName: 'imm',
        selector: { matchLabels: labels },
        template,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    },
    patch: () => ({
      spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } }] },
    }),
  },
  {
    what: 'Service spec.clusterIP',
    collection: `/api/v1/namespaces/${NS}/services`,
    object: { metadata: { name: 'imm-svc' }, spec: { selector: labels, ports: [{ port: 80 }] } },
    patch: (created) => ({ spec: { clusterIP: (created.spec as { clusterIP: string }).clusterIP === '10.0.0.77' ? '10.0.0.78' : '10.0.0.77' } }),
  },
  {
    what: 'Secret type',
    collection: `/api/v1/namespaces/${NS}/secrets`,
    object: { metadata: { name: 'imm-secret' }, type: 'Opaque', data: {} },
    patch: () => ({ type: 'kubernetes.io/basic-auth' }),
  },
  {
    what: 'Secret data when immutable: true',
    collection: `/api/v1/namespaces/${NS}/secrets`,
    object: { metadata: { name: 'imm-secret-2' }, immutable: true, data: { a: 'eA==' } },
    patch: () => ({ data: { a: 'eQ==' } }),
  },
];

export const immutableCases: CaseModule = (ctx) => {
  for (const c of cases) {
    it(`${c.what} cannot change (422 Invalid)`, async () => {
      const { server } = ctx();
      const created = await kubeJson(server, 'POST', c.collection, { body: c.object });
      assert.equal(created.status, 201, created.text);
      const name = (c.object.metadata as { name: string }).name;
      const changed = await kubeJson(server, 'PATCH', `${c.collection}/${name}`, { body: c.patch(created.body), contentType: 'application/merge-patch+json' });
      assert.equal(changed.status, 422, changed.text);
      assert.equal(changed.body.reason, 'Invalid');
    });
  }
};
