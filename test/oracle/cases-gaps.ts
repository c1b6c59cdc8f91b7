/**
 * The 1.20 gaps that make some cases stand-in only, confirmed on the real server so the list in
 * docs/local-kubernetes.md stays true (runs against the oracle only).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cmPath, NS, type CaseModule } from './context.js';
import { kubeJson } from '../support/kube.js';

export const gapCases: CaseModule = (ctx) => {
  it('1.20 ignores fieldValidation=Strict and prunes the unknown field silently [oracle only]', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'POST', `${cmPath()}?fieldValidation=Strict`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gap-strict' }, bogus: 1 },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.bogus, undefined);
  });

  it('1.20 serves no policy/v1 and no aggregated discovery [oracle only]', async () => {
    const { server } = ctx();
    assert.equal((await kubeJson(server, 'GET', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`)).status, 404);
    assert.equal((await kubeJson(server, 'GET', '/apis/policy/v1beta1')).status, 200);
    const discovery = await kubeJson(server, 'GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    assert.equal(discovery.body.kind, 'APIGroupList');
    assert.equal((await kubeJson(server, 'GET', '/openapi/v3')).status, 404);
  });
};
