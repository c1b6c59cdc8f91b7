import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { KubeNotConfiguredError, loadKubeConfig } from '../../../lib/kube/client.js';
import { startTestApiServer, type TestApiServer } from '../../support/kube.js';

describe('lib/kube loadKubeConfig: explicit file, in-cluster service account, ~/.kube/config, or a plain error', () => {
  let kube: TestApiServer;
  let dir: string;

  before(async () => {
    kube = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-kubeconfig-'));
  });
  after(async () => {
    await kube?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A pod's service account mount for the stand-in: its CA, a bearer token and a namespace. */
  const serviceAccount = (name: string): string => {
    const account = join(dir, name);
    mkdirSync(account, { recursive: true });
    writeFileSync(join(account, 'ca.crt'), kube.caCert ?? '');
    writeFileSync(join(account, 'token'), kube.token);
    writeFileSync(join(account, 'namespace'), 'team-a\n');
    return account;
  };
  const emptyHome = (): string => mkdtempSync(join(dir, 'home-'));
  const port = (): string => new URL(kube.url).port;

  it('uses the in-cluster service account in a pod, over TLS with its CA and token', async () => {
    const kc = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port() },
      serviceAccountDir: serviceAccount('sa'),
      home: emptyHome(),
    });
    assert.equal(kc.getCurrentCluster()?.server, `https://127.0.0.1:${port()}`);
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'team-a');
    const namespaces = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    assert.ok(
      namespaces.items.some((n) => n.metadata?.name === 'default'),
      'a real request through the in-cluster config',
    );
  });

  it('prefers an explicit kubeconfig (or KUBECONFIG) over the pod, and merges several files', () => {
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1', KUBECONFIG: kube.kubeconfigPath };
    assert.equal(loadKubeConfig({ env, serviceAccountDir: serviceAccount('sa2') }).getCurrentCluster()?.server, kube.url);
    assert.equal(loadKubeConfig({ kubeconfig: kube.kubeconfigPath, env: {} }).getCurrentCluster()?.server, kube.url);
    const other = join(dir, 'other.yaml');
    kube.writeKubeconfig(other, { token: 'someone-else' });
    const merged = loadKubeConfig({ kubeconfig: [kube.kubeconfigPath, other].join(delimiter), env: {} });
    assert.equal(merged.getCurrentCluster()?.server, kube.url);
    assert.equal(merged.getCurrentUser()?.token, kube.token, 'the first file wins a name both use');
  });

  it('falls back to ~/.kube/config outside a pod', () => {
    const home = emptyHome();
    mkdirSync(join(home, '.kube'));
    kube.writeKubeconfig(join(home, '.kube', 'config'), { token: 'from-home' });
    assert.equal(loadKubeConfig({ env: {}, home }).getCurrentUser()?.token, 'from-home');
  });

  it('says plainly that no Kubernetes API is configured and how to give one', () => {
    assert.throws(
      () => loadKubeConfig({ env: {}, home: emptyHome(), serviceAccountDir: join(dir, 'absent') }),
      (error: unknown) => {
        assert.ok(error instanceof KubeNotConfiguredError);
        assert.match(error.message, /no Kubernetes API is configured/);
        assert.match(error.message, /--kubeconfig <file>/);
        assert.match(error.message, /KUBECONFIG/);
        return true;
      },
    );
    assert.throws(
      () => loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: '127.0.0.1' }, home: emptyHome(), serviceAccountDir: join(dir, 'absent') }),
      /token is missing/,
    );
    assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'nope.yaml'), env: {} }), /nope\.yaml does not exist/);
  });
});
