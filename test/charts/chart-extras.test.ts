import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Deployment, V1PodDisruptionBudget, V1Pod } from '@kubernetes/client-node';
import { OperatorPaths, Ports } from '../../lib/ports.js';
import { allCrds } from '../../api/crd/all-crds.js';
import { createHelm } from '../support/helm.js';
import { chartDir, parseManifests, renderChart, type K8sDoc } from './render.js';

/**
 * What a chart user expects besides the workload: `helm lint --strict` passes, values.schema.json
 * refuses bad values with a message naming them, the operator gets a PodDisruptionBudget when it
 * has replicas to spare, and `helm test` has a hook Pod that checks the operator answers.
 */
const find = <T>(docs: K8sDoc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name) as unknown as T | undefined;

describe('charts/keelson for chart users', () => {
  it('passes helm lint --strict with default and non-default values', () => {
    const helm = createHelm();
    try {
      assert.match(helm.sync('lint', '--strict', chartDir), /1 chart\(s\) linted, 0 chart\(s\) failed/);
      const admin = ['--set', 'admin.enabled=true', '--set', 'admin.existingSecret=env', '--set', 'admin.secretKey=chart-lint-secret-key-0123'];
      assert.match(helm.sync('lint', '--strict', chartDir, ...admin, '--set', 'operator.watchNamespaces={a,b}', '--set', 'serviceMonitor.enabled=true'), /0 chart\(s\) failed/);
    } finally {
      helm.close();
    }
  });

  it('refuses values the schema does not allow, naming each one', () => {
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [{ operator: { replicas: 'two' } }, /at '\/operator\/replicas': got string, want integer/],
      [{ operator: { replicas: 0 } }, /at '\/operator\/replicas': minimum: got 0, want 1/],
      [{ operator: { logLevel: 'loud' } }, /at '\/operator\/logLevel': value must be one of 'trace'/],
      [{ operator: { watchNamespaces: ['Team_A'] } }, /at '\/operator\/watchNamespaces\/0'/],
      [{ operater: { replicas: 2 } }, /additional properties 'operater' not allowed/],
      [{ ports: { metrics: 70000 } }, /at '\/ports\/metrics': maximum: got 70,?000, want 65,?535/],
      [{ image: { pullPolicy: 'Sometimes' } }, /at '\/image\/pullPolicy'/],
      [{ crds: { install: 'yes' } }, /at '\/crds\/install': got string, want boolean/],
      [{ serviceMonitor: { interval: 'often' } }, /at '\/serviceMonitor\/interval'/],
      [{ operator: { caTrustPropagationSeconds: -1 } }, /at '\/operator\/caTrustPropagationSeconds': minimum: got -1, want 0/],
      [{ operator: { caTrustPropagationSeconds: 1.5 } }, /at '\/operator\/caTrustPropagationSeconds': got number, want integer/],
    ];
    for (const [values, message] of refused) {
      assert.throws(() => renderChart(values), (err: Error) => {
        assert.match(err.message, /values don't meet the specifications of the schema/);
        assert.match(err.message, message);
        return true;
      }, JSON.stringify(values));
    }
    assert.ok(renderChart({ operator: { replicas: 3, logLevel: 'debug', watchNamespaces: ['team-a'] }, ports: { metrics: 9100 } }).length > 0, 'good values render');
    const operator = find<V1Deployment>(renderChart({ operator: { caTrustPropagationSeconds: 45 } }), 'Deployment', 'keelson-operator')!;
    assert.ok(operator.spec?.template.spec?.containers[0]?.args?.includes('--ca-trust-propagation=45'), 'the CA trust propagation time reaches the operator');
  });

  it('protects the operator with a PodDisruptionBudget only when it runs more than one replica', () => {
    const pdb = find<V1PodDisruptionBudget>(renderChart(), 'PodDisruptionBudget', 'keelson-operator')!;
    const deployment = find<V1Deployment>(renderChart(), 'Deployment', 'keelson-operator')!;
    assert.equal(pdb.apiVersion, 'policy/v1');
    assert.equal(pdb.spec?.maxUnavailable, 1);
    assert.deepEqual(pdb.spec?.selector?.matchLabels, deployment.spec?.selector.matchLabels, 'selects exactly the operator pods');
    for (const values of [{ operator: { replicas: 1 } }, { operator: { leaderElection: { enabled: false } } }, { operator: { podDisruptionBudget: { enabled: false } } }]) {
      assert.equal(find(renderChart(values), 'PodDisruptionBudget', 'keelson-operator'), undefined, JSON.stringify(values));
    }
  });

  it('leaves the CEL rules out of the CRD for servers before 1.25, keeping the rest of the schema', () => {
    const helm = createHelm();
    try {
      const crdFor = (version: string) => helm.sync('template', 'keelson', chartDir, '--kube-version', version, '-s', 'templates/crds.yaml');
      const withCel = crdFor('1.25.0');
      const withoutCel = crdFor('1.24.9');
      assert.equal(withCel.match(/x-kubernetes-validations/g)?.length, JSON.stringify(allCrds()).match(/x-kubernetes-validations/g)?.length);
      assert.doesNotMatch(withoutCel, /x-kubernetes-validations/);
      const strip = (text: string) => JSON.stringify(parseManifests(text), (key, value: unknown) => (key === 'x-kubernetes-validations' ? undefined : value));
      assert.equal(strip(withoutCel), strip(withCel), 'only the CEL rules differ');
    } finally {
      helm.close();
    }
  });

  it('has a helm test hook Pod that asks the operator metrics Service, with the chart image and security context', () => {
    const docs = renderChart({ ports: { metrics: 9100 }, helmTest: { timeoutSeconds: 30 } }, 'db', 'ops');
    const pod = find<V1Pod>(docs, 'Pod', 'db-keelson-test-operator')!;
    assert.equal(pod.metadata?.annotations?.['helm.sh/hook'], 'test');
    assert.equal(pod.spec?.restartPolicy, 'Never');
    const operator = find<V1Deployment>(docs, 'Deployment', 'db-keelson-operator')!.spec!.template.spec!;
    const container = pod.spec!.containers[0]!;
    assert.equal(container.image, operator.containers[0]!.image);
    assert.deepEqual(container.securityContext, operator.containers[0]!.securityContext);
    assert.deepEqual(pod.spec?.securityContext, operator.securityContext);
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
    const service = find<K8sDoc & { spec: { ports: Array<{ port: number }> } }>(docs, 'Service', 'db-keelson-operator-metrics')!;
    assert.equal(service.spec.ports[0]!.port, 9100);
    assert.equal(env.OPERATOR_METRICS_URL, `http://db-keelson-operator-metrics.ops.svc:9100${OperatorPaths.metrics}`);
    assert.equal(env.TIMEOUT_SECONDS, '30');
    assert.deepEqual(container.command, ['node', '--input-type=module', '-e']);
    assert.equal(Ports.operatorMetrics, 8082, 'the default metrics port of the code');
  });
});
