/** coordination.k8s.io/v1 Leases: the HA lock. CAS race between two clients, MicroTime format. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { NS, type CaseModule } from './context.js';
import { kubeJson } from '../support/kube.js';

const leasePath = (name = ''): string => `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases${name ? `/${name}` : ''}`;

function client(kubeconfigPath: string): k8s.CoordinationV1Api {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return kc.makeApiClient(k8s.CoordinationV1Api);
}

export const leaseCases: CaseModule = (ctx) => {
  it('two clients race to take the same Lease version: exactly one wins, the other gets 409', async () => {
    const { server } = ctx();
    const alice = client(server.kubeconfigPath);
    const bob = client(server.kubeconfigPath);
    await alice.createNamespacedLease({
      namespace: NS,
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'nobody', leaseDurationSeconds: 10, renewTime: new k8s.V1MicroTime(Date.now()) } },
    });
    for (let round = 0; round < 5; round++) {
      const [seenByAlice, seenByBob] = await Promise.all([
        alice.readNamespacedLease({ name: 'leader', namespace: NS }),
        bob.readNamespacedLease({ name: 'leader', namespace: NS }),
      ]);
      assert.equal(seenByAlice.metadata?.resourceVersion, seenByBob.metadata?.resourceVersion);
      const take = (api: k8s.CoordinationV1Api, seen: k8s.V1Lease, holder: string) =>
        api.replaceNamespacedLease({
          name: 'leader',
          namespace: NS,
          body: {
            ...seen,
            spec: {
              ...seen.spec,
              holderIdentity: holder,
              renewTime: new k8s.V1MicroTime(Date.now()),
              leaseTransitions: (seen.spec?.leaseTransitions ?? 0) + 1,
            },
          },
        });
      const results = await Promise.allSettled([take(alice, seenByAlice, `alice-${round}`), take(bob, seenByBob, `bob-${round}`)]);
      const won = results.filter((r): r is PromiseFulfilledResult<k8s.V1Lease> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(results.map((r) => r.status))}`);
      assert.equal((lost[0].reason as { code?: number }).code, 409);
      const now = await alice.readNamespacedLease({ name: 'leader', namespace: NS });
      assert.equal(now.spec?.holderIdentity, won[0].value.spec?.holderIdentity);
      assert.equal(now.spec?.leaseTransitions, round + 1);
    }
  });

  it('Lease times must be MicroTime with exactly 6 fraction digits (a JS Date string is 400)', async () => {
    const { server } = ctx();
    const lease = (name: string, renewTime: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: 'x', renewTime },
    });
    const millis = await kubeJson(server, 'POST', leasePath(), { body: lease('millis', '2026-11-22T10:00:00.000Z') });
    assert.equal(millis.status, 400, millis.text);
    assert.equal(millis.body.reason, 'BadRequest');
    const micros = await kubeJson(server, 'POST', leasePath(), { body: lease('micros', '2026-11-22T10:00:00.123456Z') });
    assert.equal(micros.status, 201, micros.text);
    assert.equal((micros.body.spec as { renewTime: string }).renewTime, '2026-11-22T10:00:00.123456Z');
  });

  it('Lease validation: leaseDurationSeconds and leaseTransitions must not be negative or zero (422)', async () => {
    const { server } = ctx();
    const zero = await kubeJson(server, 'POST', leasePath(), {
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'zero' }, spec: { leaseDurationSeconds: 0 } },
    });
    assert.equal(zero.status, 422, zero.text);
    assert.ok(
      (zero.body.details as { causes: Array<{ field: string }> }).causes.some((c) => c.field === 'spec.leaseDurationSeconds'),
      zero.text,
    );
    const negative = await kubeJson(server, 'POST', leasePath(), {
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'neg' }, spec: { leaseTransitions: -1 } },
    });
    assert.equal(negative.status, 422, negative.text);
  });
};
