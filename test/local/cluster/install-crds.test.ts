import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { installCrds } from '../../../local/cluster/stack.js';
import { databaseClusterCrd } from '../../../api/crd/crd.js';
import { kubeRequest, startTestApiServer, type TestApiServer } from '../../support/kube.js';

describe('installCrds (local/cluster/stack.ts)', () => {
  let server: TestApiServer;
  before(async () => {
    server = await startTestApiServer();
  });
  after(async () => {
    await server?.close();
  });

  it('installs the generated CRD unchanged, x-kubernetes-* keys included, and updates it in place', async () => {
    const logger = createLogger({ name: 'install-crds-test', level: 'silent' });
    await installCrds(server.kubeConfig, logger);
    await installCrds(server.kubeConfig, logger);
    const stored = await kubeRequest(server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/databaseclusters.keelson.io');
    assert.equal(stored.status, 200);
    const schema = (stored.body as { spec: { versions: Array<{ schema: { openAPIV3Schema: unknown } }> } }).spec.versions[0]!.schema.openAPIV3Schema;
    assert.deepEqual(schema, JSON.parse(JSON.stringify(databaseClusterCrd().spec.versions[0]!.schema!.openAPIV3Schema)));
  });
});
