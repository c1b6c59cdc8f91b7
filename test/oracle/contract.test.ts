/**
 * The API contract suite: the SAME cases run against the TypeScript stand-in and the real
 * kube-apiserver 1.20.2 (oracle lane). A case that fails only on one side is a stand-in
 * difference: fix the stand-in or list it in docs/local-kubernetes.md ("Oracle lane").
 * Without the oracle binaries only the stand-in runs, except with CI=true, where their absence
 * fails (CI must build them first with scripts/oracle/ci-step.sh).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clientCases } from './cases-clients.js';
import { coreCases } from './cases-core.js';
import { crdCases } from './cases-crd.js';
import { gapCases } from './cases-gaps.js';
import { gcCases } from './cases-gc.js';
import { hostileCases } from './cases-hostile.js';
import { immutableCases } from './cases-immutable.js';
import { leaseCases } from './cases-lease.js';
import { reconcileCases } from './cases-reconcile.js';
import { standInOnlyCases } from './cases-standin-only.js';
import { storageCases } from './cases-storage.js';
import { updateRuleCases } from './cases-update-rules.js';
import { watchCases } from './cases-watch.js';
import { workloadCases } from './cases-workloads.js';
import { writeCases } from './cases-writes.js';
import { kubeJson } from '../support/kube.js';
import { NS, type CaseContext } from './context.js';
import { contractTargets, type ContractServer } from './targets.js';

const { targets, oracleAbsent } = contractTargets();

if (oracleAbsent && process.env.CI === 'true') {
  describe('oracle lane', () => {
    it('has the real kube-apiserver binaries (required when CI=true)', () => {
      assert.fail(`${oracleAbsent}. CI must run scripts/oracle/ci-step.sh before the tests.`);
    });
  });
} else if (oracleAbsent) {
  process.stdout.write(`# oracle lane not run: ${oracleAbsent}\n`);
}

for (const target of targets) {
  describe(`API contract: ${target.name}`, () => {
    let server: ContractServer | undefined;
    before(async () => {
      const started = Date.now();
      server = await target.start();
      process.stdout.write(`# ${target.name} ready in ${Date.now() - started} ms\n`);
      const ns = await kubeJson(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
      assert.equal(ns.status, 201, ns.text);
    });
    after(() => server?.close());
    const ctx = (): CaseContext => {
      if (!server) throw new Error(`${target.name} did not start`);
      return { target, server };
    };

    describe('objects, errors, selectors, patches, finalizers', () => coreCases(ctx));
    describe('write semantics', () => writeCases(ctx));
    describe('pods and workloads', () => workloadCases(ctx));
    describe('storage classes and claim growth', () => storageCases(ctx));
    describe('immutable fields', () => immutableCases(ctx));
    describe('watches', () => watchCases(ctx));
    describe('leases', () => leaseCases(ctx));
    describe('unconditional updates per kind', () => updateRuleCases(ctx));
    describe('custom resources via kubectl', () => crdCases(ctx));
    describe('reconcile-loop semantics', () => reconcileCases(ctx));
    describe('unmodified clients: kubectl verbs, client-node informer', () => clientCases(ctx));
    describe('garbage collection and namespace deletion', () => gcCases(ctx));
    describe('hostile and malformed requests', () => hostileCases(ctx));
    if (target.real) describe('1.20 gaps (oracle only)', () => gapCases(ctx));
    else describe('beyond 1.20 (stand-in only)', () => standInOnlyCases(ctx));
  });
}
