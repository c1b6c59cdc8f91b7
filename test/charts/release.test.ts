import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { crdFiles } from '../../operator/crds/crd-files.js';
import { kubectl } from '../operator/support.js';
import { createHelm, type Helm } from '../support/helm.js';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { chartDir } from './render.js';

/**
 * The two documented installs, each from a clean cluster (a fresh API server stand-in) with the
 * real helm and kubectl: CRDs applied with kubectl and the chart with helm, or the chart alone;
 * then an upgrade that changes the CRD and the chart, and an uninstall that leaves no release
 * Secret behind and keeps the CRD (so every DatabaseCluster).
 */
const crdName = 'databaseclusters.keelson.io';
const namespace = 'keelson-system';
const crdFile = [...crdFiles().keys()][0]!;

interface Cluster {
  server: TestApiServer;
  helm: Helm;
  dir: string;
  kubectl: (...args: string[]) => Promise<string>;
}

async function cleanCluster(): Promise<Cluster> {
  const server = await startTestApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-release-'));
  return { server, dir, helm: createHelm(server.kubeconfigPath), kubectl: (...args) => kubectl(server.kubeconfigPath, join(dir, 'kcache'), ...args) };
}

async function closeCluster(cluster: Cluster | undefined): Promise<void> {
  cluster?.helm.close();
  await cluster?.server.close();
  if (cluster) rmSync(cluster.dir, { recursive: true, force: true });
}

/** The CRD as a newer release would ship it: one more short name. */
function newerCrd(text: string): string {
  const crd = parse(text) as { spec: { names: { shortNames: string[] } } };
  crd.spec.names.shortNames.push('kdb');
  return stringify(crd);
}

const shortNames = (c: Cluster) => c.kubectl('get', 'crd', crdName, '-o', 'jsonpath={.spec.names.shortNames}');
const releaseSecrets = (c: Cluster) => c.kubectl('get', 'secrets', '-n', namespace, '-l', 'owner=helm', '-o', 'name');
const replicas = (c: Cluster) => c.kubectl('get', 'deployment', '-n', namespace, 'keelson-operator', '-o', 'jsonpath={.spec.replicas}');
const manifestKinds = async (c: Cluster) => (await c.helm.ok('get', 'manifest', 'keelson', '-n', namespace)).match(/^kind: \w+/gm)?.map((k) => k.slice(6)) ?? [];

describe('charts/keelson release: CRDs with kubectl apply, the chart with helm', () => {
  let c: Cluster;
  before(async () => (c = await cleanCluster()));
  after(() => closeCluster(c));

  it('installs after kubectl apply --server-side -f crds/, leaving the CRD to kubectl', async () => {
    await c.kubectl('apply', '--server-side', '-f', 'crds/');
    const installed = await c.helm.run('install', 'keelson', chartDir, '-n', namespace, '--create-namespace');
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /STATUS: deployed/);
    assert.match(installed.stdout, /CRD already existed outside this release/, 'NOTES tell how the CRD is upgraded');
    assert.ok(!(await manifestKinds(c)).includes('CustomResourceDefinition'));
    assert.ok((await manifestKinds(c)).includes('Deployment'));
  });

  it('upgrades: the CRD with kubectl apply, then the release with helm upgrade', async () => {
    const crds = join(c.dir, 'crds');
    cpSync('crds', crds, { recursive: true });
    writeFileSync(join(crds, crdFile), newerCrd(readFileSync(join(crds, crdFile), 'utf8')));
    await c.kubectl('apply', '--server-side', '-f', crds);
    assert.match(await shortNames(c), /kdb/);
    const upgraded = await c.helm.run('upgrade', 'keelson', chartDir, '-n', namespace, '--set', 'operator.replicas=3');
    assert.equal(upgraded.code, 0, upgraded.stderr);
    assert.equal(await replicas(c), '3');
    assert.match(await shortNames(c), /kdb/, 'helm upgrade leaves the kubectl-managed CRD as it is');
  });

  it('uninstalls without leaving release Secrets, and keeps the CRD', async () => {
    assert.equal((await releaseSecrets(c)).trim().split('\n').length, 2, 'one Secret per revision before');
    const removed = await c.helm.run('uninstall', 'keelson', '-n', namespace);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await releaseSecrets(c)).trim(), '');
    assert.equal((await c.kubectl('get', 'deployments', '-n', namespace, '-o', 'name')).trim(), '');
    assert.match(await shortNames(c), /kdb/);
  });
});

describe('charts/keelson release: the chart alone', () => {
  let c: Cluster;
  let newerChart: string;
  before(async () => {
    c = await cleanCluster();
    // The next chart version: a changed CRD and a bumped version.
    newerChart = join(c.dir, 'keelson');
    cpSync(chartDir, newerChart, { recursive: true });
    const crdPath = join(newerChart, 'files', 'crds', crdFile);
    writeFileSync(crdPath, newerCrd(readFileSync(crdPath, 'utf8')));
    const chartYaml = join(newerChart, 'Chart.yaml');
    writeFileSync(chartYaml, readFileSync(chartYaml, 'utf8').replace(/^version: .*$/m, 'version: 0.1.1'));
  });
  after(() => closeCluster(c));

  it('refuses a bad value before creating anything, naming it', async () => {
    const refused = await c.helm.run('install', 'keelson', chartDir, '-n', namespace, '--create-namespace', '--set', 'operator.replicas=two');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /values don't meet the specifications of the schema[\s\S]*at '\/operator\/replicas': got string, want integer/);
    assert.equal((await c.kubectl('get', 'crd', '-o', 'name')).trim(), '');
  });

  it('installs the operator and the CRD, owned by the release', async () => {
    const installed = await c.helm.run('install', 'keelson', chartDir, '-n', namespace, '--create-namespace');
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /The chart installs and upgrades the DatabaseCluster and Backup CRDs; helm uninstall keeps them/);
    assert.ok((await manifestKinds(c)).includes('CustomResourceDefinition'));
    assert.equal(await c.kubectl('get', 'crd', crdName, '-o', 'jsonpath={.metadata.annotations.meta\\.helm\\.sh/release-name}'), 'keelson');
    assert.doesNotMatch(await shortNames(c), /kdb/);
  });

  it('upgrades the CRD with the release', async () => {
    const upgraded = await c.helm.run('upgrade', 'keelson', newerChart, '-n', namespace, '--set', 'operator.replicas=3');
    assert.equal(upgraded.code, 0, upgraded.stderr);
    assert.match(await shortNames(c), /kdb/);
    assert.equal(await replicas(c), '3');
  });

  it('uninstalls without leaving release Secrets, keeps the CRD, and a new install takes it over', async () => {
    const removed = await c.helm.run('uninstall', 'keelson', '-n', namespace);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /kept due to the resource policy/);
    assert.equal((await releaseSecrets(c)).trim(), '');
    assert.match(await shortNames(c), /kdb/);
    const again = await c.helm.run('install', 'keelson', newerChart, '-n', namespace);
    assert.equal(again.code, 0, again.stderr);
    assert.ok((await manifestKinds(c)).includes('CustomResourceDefinition'), 'the kept CRD belongs to the new release');
  });
});
