import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { maxNestingDepth } from '../../../local/apiserver/http/http-io.js';
import { kubeJson, startTestApiServer, type TestApiServer } from '../../support/kube.js';

const cms = '/api/v1/namespaces/default/configmaps';
/** A JSON array nested `levels` deep (the outermost array is level 1). */
const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

describe('API server stand-in: hostile bodies and options (the stand-in-specific limits)', () => {
  let server: TestApiServer;
  before(async () => {
    server = await startTestApiServer();
    const created = await kubeJson(server, 'POST', cms, { body: { metadata: { name: 'target', labels: { keep: 'me' } }, data: { a: '1' } } });
    assert.equal(created.status, 201, created.text);
  });
  after(() => server.close());

  it('serves bodies nested up to the limit through every write path, and refuses deeper ones with a 400', async () => {
    // The body object itself is one level, so the field may hold maxNestingDepth - 1.
    const atLimit = nested(maxNestingDepth - 1);
    const created = await kubeJson(server, 'POST', cms, { body: `{"metadata":{"name":"deep"},"zzz":${atLimit}}` });
    assert.equal(created.status, 201, created.text.slice(0, 300));
    const writes: Array<[string, string]> = [
      ['application/merge-patch+json', `{"zzz":${atLimit}}`],
      ['application/strategic-merge-patch+json', `{"zzz":${atLimit}}`],
      ['application/json-patch+json', `[{"op":"add","path":"/zzz","value":${nested(maxNestingDepth - 2)}}]`],
    ];
    for (const [contentType, body] of writes) {
      const res = await kubeJson(server, 'PATCH', `${cms}/target`, { body, contentType });
      assert.equal(res.status, 200, `${contentType}: ${res.text.slice(0, 300)}`);
    }
    const apply = await kubeJson(server, 'PATCH', `${cms}/target?fieldManager=deep`, {
      body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"target"},"zzz":${atLimit}}`,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(apply.status, 200, apply.text.slice(0, 300));
    for (const levels of [maxNestingDepth + 1, 10_000, 100_000]) {
      const res = await kubeJson(server, 'POST', cms, { body: `{"metadata":{"name":"deeper"},"zzz":${nested(levels)}}` });
      assert.equal(res.status, 400, `${levels} levels`);
      assert.match(String(res.body.message), /exceeded max depth/);
      const put = await kubeJson(server, 'PUT', `${cms}/target`, { body: `{"metadata":{"name":"target"},"zzz":${nested(levels)}}` });
      assert.equal(put.status, 400, `PUT, ${levels} levels`);
    }
    assert.equal((await kubeJson(server, 'GET', `${cms}/deeper`)).status, 404);
  });

  it('type-checks a DELETE body field by field (400 naming the field) and deletes nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ gracePeriodSeconds: 'x' }, /DeleteOptions\.gracePeriodSeconds of type int64/],
      [{ gracePeriodSeconds: 1.5 }, /DeleteOptions\.gracePeriodSeconds of type int64/],
      [{ dryRun: 'All' }, /DeleteOptions\.dryRun of type \[\]string/],
      [{ orphanDependents: 'yes' }, /DeleteOptions\.orphanDependents of type bool/],
      [{ propagationPolicy: 7 }, /DeleteOptions\.propagationPolicy/],
      [{ preconditions: { uid: 5 } }, /DeleteOptions\.preconditions\.uid of type string/],
      [[1], /cannot unmarshal array/],
      [{ kind: 'Pod' }, /cannot be converted to DeleteOptions/],
    ];
    for (const [body, message] of cases) {
      for (const path of [`${cms}/target`, `${cms}?labelSelector=keep%3Dme`]) {
        const res = await kubeJson(server, 'DELETE', path, { body });
        assert.equal(res.status, 400, `${JSON.stringify(body)} on ${path}: ${res.text}`);
        assert.match(String(res.body.message), message);
      }
    }
    assert.equal((await kubeJson(server, 'GET', `${cms}/target`)).status, 200);
  });

  it('reads boolean options as Go does: only "0" and "false" are false', async () => {
    const list = await kubeJson(server, 'GET', `${cms}?watch=false`);
    assert.equal(list.body.kind, 'ConfigMapList');
    const dry = await kubeJson(server, 'DELETE', `${cms}/target?dryRun=All`);
    assert.equal(dry.status, 200);
    assert.equal((await kubeJson(server, 'GET', `${cms}/target`)).status, 200, 'dryRun=All deletes nothing');
    const orphan = await kubeJson(server, 'DELETE', `${cms}/target?orphanDependents=no&propagationPolicy=Orphan&dryRun=All`);
    assert.equal(orphan.status, 422, 'orphanDependents is set (to true) even when its value is "no"');
  });
});
