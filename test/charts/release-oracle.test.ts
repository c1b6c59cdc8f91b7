import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectl } from '../operator/support.js';
import { createHelm, type Helm } from '../support/helm.js';
import { oracleMissing, startOracleApiServer, ORACLE_VERSION, type OracleApiServer } from '../support/oracle.js';
import { chartDir } from './render.js';

/**
 * `helm install`, `upgrade` and `uninstall` of the chart alone on a real kube-apiserver 1.20.2
 * (ADR 0700): Helm validates against the server's own OpenAPI there, so the CRD must come without
 * x-kubernetes-validations (unknown before 1.23), the PodDisruptionBudget as policy/v1beta1, and
 * every port with its protocol (1.20's server-side apply needs the list key).
 */
const missing = oracleMissing();
const namespace = 'keelson-system';

if (missing && process.env.CI === 'true') {
  describe(`charts/keelson on kube-apiserver ${ORACLE_VERSION}`, () => {
    it('has the oracle binaries (required when CI=true)', () => assert.fail(`${missing}. CI must run scripts/oracle/ci-step.sh first.`));
  });
} else if (missing) {
  process.stdout.write(`# chart oracle release test not run: ${missing}\n`);
} else {
  describe(`charts/keelson on kube-apiserver ${ORACLE_VERSION}`, { timeout: 180_000 }, () => {
    let oracle: OracleApiServer;
    let helm: Helm;
    let dir: string;
    const k = (...args: string[]) => kubectl(oracle.kubeconfigPath, join(dir, 'kcache'), ...args);

    before(async () => {
      oracle = await startOracleApiServer();
      helm = createHelm(oracle.kubeconfigPath);
      dir = mkdtempSync(join(tmpdir(), 'keelson-chart-oracle-'));
    });
    after(async () => {
      helm?.close();
      await oracle?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('installs with a CRD the server accepts and a policy/v1beta1 PodDisruptionBudget', async () => {
      const installed = await helm.run('install', 'keelson', chartDir, '-n', namespace, '--create-namespace');
      assert.equal(installed.code, 0, installed.stderr);
      const crd = await k('get', 'crd', 'databaseclusters.keelson.io', '-o', 'json');
      assert.doesNotMatch(crd, /x-kubernetes-validations/);
      assert.match(crd, /"pattern"/, 'the schema keeps what 1.20 checks');
      assert.equal(await k('get', 'poddisruptionbudgets.v1beta1.policy', '-n', namespace, 'keelson-operator', '-o', 'jsonpath={.spec.maxUnavailable}'), '1');
    });

    it('upgrades and uninstalls, keeping the CRD and no release Secret', async () => {
      const upgraded = await helm.run('upgrade', 'keelson', chartDir, '-n', namespace, '--set', 'operator.replicas=3');
      assert.equal(upgraded.code, 0, upgraded.stderr);
      assert.equal(await k('get', 'deployment', '-n', namespace, 'keelson-operator', '-o', 'jsonpath={.spec.replicas}'), '3');
      const removed = await helm.run('uninstall', 'keelson', '-n', namespace);
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal((await k('get', 'secrets', '-n', namespace, '-l', 'owner=helm', '-o', 'name')).trim(), '');
      assert.equal((await k('get', 'crd', '-o', 'name')).trim(), 'customresourcedefinition.apiextensions.k8s.io/backups.keelson.io\ncustomresourcedefinition.apiextensions.k8s.io/databaseclusters.keelson.io\ncustomresourcedefinition.apiextensions.k8s.io/databases.keelson.io');
    });
  });
}
