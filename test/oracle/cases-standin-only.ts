/**
 * Behaviour Keelson relies on that kube-apiserver 1.20 does not have. These run against the
 * stand-in only; each name says why (docs/local-kubernetes.md, "Oracle lane", lists them).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type CaseModule, cmPath, eventually, NS } from './context.js';
import { kubectl } from './cases-crd.js';
import { databaseCrd } from '../local/apiserver/fixtures.js';
import { kubeJson } from '../support/kube.js';

const celCrd = databaseCrd({ group: 'contract.keelson.io', plural: 'gadgets', kind: 'Gadget', cel: true });

export const standInOnlyCases: CaseModule = (ctx) => {
  it('CRD CEL rules (x-kubernetes-validations) reject an invalid object [stand-in only: 1.20 has no CRD CEL]', async () => {
    const { server } = ctx();
    assert.equal((await kubeJson(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: celCrd })).status, 201);
    const path = `/apis/contract.keelson.io/v1/namespaces/${NS}/gadgets`;
    await eventually('gadgets served', async () => ((await kubeJson(server, 'GET', path)).status === 200 ? true : undefined), 10_000);
    const bad = await kubeJson(server, 'POST', path, {
      body: { apiVersion: 'contract.keelson.io/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { instances: 5, maxInstances: 3 } },
    });
    assert.equal(bad.status, 422);
    assert.match(String(bad.body.message), /instances must not exceed maxInstances/);
    const good = await kubeJson(server, 'POST', path, {
      body: { apiVersion: 'contract.keelson.io/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { instances: 2, maxInstances: 3 } },
    });
    assert.equal(good.status, 201);
  });

  it('policy/v1 PodDisruptionBudget [stand-in only: 1.20 serves policy/v1beta1]', async () => {
    const { server } = ctx();
    const pdb = await kubeJson(server, 'POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
      body: {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'pdb' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'x' } } },
      },
    });
    assert.equal(pdb.status, 201, pdb.text);
  });

  it('fieldValidation=Strict answers 400 for an unknown field [stand-in only: 1.20 ignores fieldValidation]', async () => {
    const { server } = ctx();
    const strict = await kubeJson(server, 'POST', `${cmPath()}?fieldValidation=Strict`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict' }, data: {}, bogus: 1 },
    });
    assert.equal(strict.status, 400);
    assert.match(String(strict.body.message), /unknown field "bogus"/);
  });

  it('fieldValidation must be Ignore, Warn or Strict [stand-in only: 1.20 ignores fieldValidation]', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'POST', `${cmPath()}?fieldValidation=bogus`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict-bogus' } },
    });
    assert.equal(res.status, 422, res.text);
    assert.equal(
      res.body.message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"',
    );
    assert.equal((await kubeJson(server, 'GET', cmPath('strict-bogus'))).status, 404);
  });

  it('aggregated discovery and OpenAPI v3 [stand-in only: 1.20 has neither]', async () => {
    const { server } = ctx();
    const aggregated = await kubeJson(server, 'GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    assert.match(String(aggregated.headers['content-type']), /as=APIGroupDiscoveryList/);
    assert.equal((await kubeJson(server, 'GET', '/openapi/v3')).status, 200);
    // kubectl explain reads OpenAPI v3 here.
    assert.match(await kubectl(server, 'explain', 'configmap'), /KIND:\s+ConfigMap/);
  });
};
