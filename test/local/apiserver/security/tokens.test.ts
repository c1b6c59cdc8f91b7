import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeJson, startTestApiServer, type TestApiServer } from '../../../support/kube.js';

/** The TokenRequest subresource (serviceaccounts/NAME/token) and the identity its tokens carry. */
describe('API server stand-in: ServiceAccount tokens', () => {
  let server: TestApiServer;
  let core: k8s.CoreV1Api;
  let podUid: string;

  before(async () => {
    server = await startTestApiServer();
    core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'db' } } });
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'db-0' }, spec: { serviceAccountName: 'db', containers: [{ name: 'c', image: 'x' }] } },
    });
    podUid = pod.metadata!.uid!;
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'other' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
  });
  after(() => server.close());

  const tokenPath = (sa: string) => `/api/v1/namespaces/default/serviceaccounts/${sa}/token`;

  it('answers a TokenRequest bound to a pod as a real server does (typed client)', async () => {
    const before = Date.now();
    const answer = await core.createNamespacedServiceAccountToken({
      name: 'db',
      namespace: 'default',
      body: { spec: { audiences: [], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'db-0', uid: podUid } } },
    });
    assert.equal(answer.kind, 'TokenRequest');
    assert.equal(answer.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(answer.spec.expirationSeconds, 3600);
    assert.deepEqual({ ...answer.spec.boundObjectRef }, { apiVersion: 'v1', kind: 'Pod', name: 'db-0', uid: podUid });
    assert.ok((answer.spec.audiences ?? []).length > 0, 'the default audience is filled in');
    assert.ok(answer.status?.token && answer.status.token.length > 20);
    const expires = new Date(answer.status!.expirationTimestamp).getTime();
    assert.ok(expires >= before + 3599_000 && expires <= Date.now() + 3601_000, `expires ${answer.status!.expirationTimestamp}`);
  });

  it('404 for a ServiceAccount that does not exist; 404 for a missing bound pod', async () => {
    const missing = await kubeJson(server, 'POST', tokenPath('nobody'), { body: { spec: {} } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'serviceaccounts "nobody" not found');
    const noPod = await kubeJson(server, 'POST', tokenPath('db'), { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'gone' } } } });
    assert.equal(noPod.status, 404);
    assert.equal(noPod.body.message, 'pods "gone" not found');
  });

  it('refuses a pod of another account, a stale pod UID, short lifetimes and malformed bodies', async () => {
    const otherAccount = await kubeJson(server, 'POST', tokenPath('db'), {
      body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'other' } } },
    });
    assert.equal(otherAccount.status, 400);
    assert.match(String(otherAccount.body.message), /cannot bind token for serviceaccount "db" to pod running with serviceaccount "default"/);
    const stale = await kubeJson(server, 'POST', tokenPath('db'), {
      body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'db-0', uid: 'not-the-uid' } } },
    });
    assert.equal(stale.status, 409);
    const short = await kubeJson(server, 'POST', tokenPath('db'), { body: { spec: { expirationSeconds: 60 } } });
    assert.equal(short.status, 422);
    assert.match(String(short.body.message), /spec\.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes/);
    const badType = await kubeJson(server, 'POST', tokenPath('db'), { body: { spec: { expirationSeconds: 'soon' } } });
    assert.equal(badType.status, 400);
    assert.match(String(badType.body.message), /spec\.expirationSeconds/);
    const notObject = await kubeJson(server, 'POST', tokenPath('db'), { body: '[1]' });
    assert.equal(notObject.status, 400);
    const wrongVerb = await kubeJson(server, 'GET', tokenPath('db'));
    assert.equal(wrongVerb.status, 405);
  });

  it("names the token's service account and pod in a SelfSubjectReview; other tokens stay as they were", async () => {
    const issued = await kubeJson(server, 'POST', tokenPath('db'), { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'db-0' } } } });
    const token = String((issued.body.status as { token: string }).token);
    const whoami = async (as: string | undefined) =>
      (
        await kubeJson(server, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          token: as,
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        })
      ).body.status as { userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> } };
    const pod = await whoami(token);
    assert.equal(pod.userInfo.username, 'system:serviceaccount:default:db');
    assert.ok(pod.userInfo.groups.includes('system:serviceaccounts:default'));
    assert.deepEqual(pod.userInfo.extra, { 'authentication.kubernetes.io/pod-name': ['db-0'] });
    const admin = await whoami(undefined);
    assert.doesNotMatch(admin.userInfo.username, /serviceaccount/);
  });

  it('lists the token subresource in discovery', async () => {
    const list = await kubeJson(server, 'GET', '/api/v1');
    const names = (list.body.resources as Array<{ name: string; kind: string }>).map((r) => `${r.name}:${r.kind}`);
    assert.ok(names.includes('serviceaccounts/token:TokenRequest'), names.join(' '));
  });
});
