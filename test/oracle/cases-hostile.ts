/**
 * Hostile and careless requests: malformed query options on every verb, deep nesting, patches
 * that remove metadata, apply bodies without a type, oversized annotations, bad finalizers,
 * out-of-range integers and empty claims. Each answer is the real server's, and a refused request
 * changes nothing (collections keep their objects, nothing is created).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cmPath, differs, NS, type CaseContext, type CaseModule } from './context.js';
import { kubeJson, type RawResponse } from '../support/kube.js';

type Answer = RawResponse<Record<string, unknown>>;

function refused(res: Answer, code: number, message: string | RegExp): void {
  assert.equal(res.status, code, res.text);
  if (typeof message === 'string') assert.equal(res.body.message, message);
  else assert.match(String(res.body.message), message);
}

/** 422 for an option set that does not validate, with the option as the cause's field. */
function invalidOption(res: Answer, kind: string, field: string, message: string): void {
  refused(res, 422, `${kind}.meta.k8s.io "" is invalid: ${field}: ${message}`);
  assert.equal(res.body.reason, 'Invalid');
  const details = res.body.details as { group: string; kind: string; causes: Array<{ field: string }> };
  assert.equal(details.group, 'meta.k8s.io');
  assert.equal(details.kind, kind);
  assert.equal(details.causes[0].field, field);
}

/** 1.20 lets an unparsable resourceVersion through as a 500; the stand-in answers 400 (same message). */
function badResourceVersion(ctx: CaseContext, res: Answer, value: string): void {
  refused(res, differs(ctx, { real: 500, standIn: 400 }), `resourceVersion: Invalid value: "${value}": strconv.ParseUint: parsing "${value}": invalid syntax`);
}

const labelled = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { hostile: 'yes' } },
  data: { a: '1' },
});
const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

export const hostileCases: CaseModule = (ctx) => {
  it('DELETE of a collection with a malformed option is refused before anything is deleted', async () => {
    const { server } = ctx();
    for (const name of ['hostile-a', 'hostile-b']) assert.equal((await kubeJson(server, 'POST', cmPath(), { body: labelled(name) })).status, 201);
    const collection = `${cmPath()}?labelSelector=hostile%3Dyes`;
    const del = (query: string): Promise<Answer> => kubeJson(server, 'DELETE', `${collection}&${query}`);
    invalidOption(await del('dryRun=bogus'), 'DeleteOptions', 'dryRun', 'Unsupported value: []string{"bogus"}: supported values: "All"');
    invalidOption(await del('dryRun=All&dryRun=x'), 'DeleteOptions', 'dryRun', 'Unsupported value: []string{"All", "x"}: supported values: "All"');
    refused(await del('limit=abc'), 400, 'strconv.ParseInt: parsing "abc": invalid syntax');
    refused(await del('timeoutSeconds=abc'), 400, 'strconv.ParseInt: parsing "abc": invalid syntax');
    refused(await del('gracePeriodSeconds=1.5'), 400, 'strconv.ParseInt: parsing "1.5": invalid syntax');
    badResourceVersion(ctx(), await del('resourceVersion=abc'), 'abc');
    invalidOption(
      await del('propagationPolicy=bogus'),
      'DeleteOptions',
      'propagationPolicy',
      'Unsupported value: "bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    invalidOption(
      await del('orphanDependents=true&propagationPolicy=Background'),
      'DeleteOptions',
      'propagationPolicy',
      'Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
    invalidOption(
      await del('resourceVersion=5&resourceVersionMatch=Bogus'),
      'ListOptions',
      'resourceVersionMatch',
      'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
    );
    refused(await del('continue=zzz'), 400, /continue/);
    refused(await kubeJson(server, 'DELETE', `${cmPath()}?labelSelector=!!`), 400, /unable to parse requirement/);
    const body = await kubeJson(server, 'DELETE', collection, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'bogus' } });
    invalidOption(body, 'DeleteOptions', 'propagationPolicy', 'Unsupported value: "bogus": supported values: "Foreground", "Background", "Orphan", "nil"');
    const left = await kubeJson(server, 'GET', collection);
    assert.deepEqual((left.body.items as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name).sort(), ['hostile-a', 'hostile-b']);
  });

  it('a label selector with an empty term is refused by list, watch and DELETE of a collection, which deletes nothing', async () => {
    const { server } = ctx();
    const cases: Array<[string, string]> = [
      [',', "found ',', expected: !, identifier, or 'end of string'"],
      ['hostile=yes,', "found '', expected: identifier after ','"],
      ['fz=x,', "found '', expected: identifier after ','"],
      ['hostile=yes,,x', "found ',', expected: identifier after ','"],
      ['hostile=-yes', 'invalid label value: "-yes": at key: "hostile"'],
      ['-hostile', 'invalid label key "-hostile"'],
    ];
    for (const [selector, message] of cases) {
      const query = `labelSelector=${encodeURIComponent(selector)}`;
      for (const [method, path] of [
        ['GET', `${cmPath()}?${query}`],
        ['GET', `${cmPath()}?watch=1&${query}`],
        ['DELETE', `${cmPath()}?${query}`],
      ] as const) {
        const res = await kubeJson(server, method, path);
        refused(res, 400, new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        assert.equal(res.body.reason, 'BadRequest', `${method} ${path}`);
      }
    }
    const left = await kubeJson(server, 'GET', `${cmPath()}?labelSelector=hostile%3Dyes`);
    assert.deepEqual((left.body.items as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name).sort(), ['hostile-a', 'hostile-b']);
  });

  it('a field selector skips empty terms, as the real server does', async () => {
    const { server } = ctx();
    const res = await kubeJson(server, 'GET', `${cmPath()}?labelSelector=hostile%3Dyes&fieldSelector=${encodeURIComponent('metadata.name=hostile-a,')}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (res.body.items as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name),
      ['hostile-a'],
    );
    refused(
      await kubeJson(server, 'DELETE', `${cmPath()}?fieldSelector=${encodeURIComponent('fz=x,')}`),
      400,
      '"fz" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    refused(
      await kubeJson(server, 'DELETE', `${cmPath()}?fieldSelector=${encodeURIComponent('metadata.name=a=b')}`),
      400,
      /invalid field selector: unescaped character in value/,
    );
  });

  it('lists, gets and watches refuse malformed options', async () => {
    const { server } = ctx();
    refused(await kubeJson(server, 'GET', `${cmPath()}?limit=abc`), 400, 'strconv.ParseInt: parsing "abc": invalid syntax');
    refused(await kubeJson(server, 'GET', `${cmPath()}?watch=1&timeoutSeconds=soon`), 400, 'strconv.ParseInt: parsing "soon": invalid syntax');
    badResourceVersion(ctx(), await kubeJson(server, 'GET', `${cmPath()}?resourceVersion=abc`), 'abc');
    badResourceVersion(ctx(), await kubeJson(server, 'GET', `${cmPath('hostile-a')}?resourceVersion=-1`), '-1');
    badResourceVersion(ctx(), await kubeJson(server, 'GET', `${cmPath()}?watch=1&resourceVersion=1.5`), '1.5');
    invalidOption(
      await kubeJson(server, 'GET', `${cmPath()}?resourceVersion=0&resourceVersionMatch=Exact`),
      'ListOptions',
      'resourceVersionMatch',
      'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
    assert.equal((await kubeJson(server, 'GET', `${cmPath()}?limit=-1`)).status, 200);
  });

  it('writes refuse malformed options and create nothing', async () => {
    const { server } = ctx();
    const post = (query: string): Promise<Answer> => kubeJson(server, 'POST', `${cmPath()}?${query}`, { body: labelled('hostile-new') });
    invalidOption(await post('dryRun=bogus'), 'CreateOptions', 'dryRun', 'Unsupported value: []string{"bogus"}: supported values: "All"');
    invalidOption(await post(`fieldManager=${'m'.repeat(129)}`), 'CreateOptions', 'fieldManager', 'Too long: must have at most 128 bytes');
    invalidOption(await post('fieldManager=a%01b'), 'CreateOptions', 'fieldManager', 'Invalid value: "a\\x01b": invalid character U+0001 (at position 1)');
    assert.equal((await kubeJson(server, 'GET', cmPath('hostile-new'))).status, 404);
    const put = await kubeJson(server, 'PUT', `${cmPath('hostile-a')}?dryRun=x`, { body: labelled('hostile-a') });
    invalidOption(put, 'UpdateOptions', 'dryRun', 'Unsupported value: []string{"x"}: supported values: "All"');
    const merge = await kubeJson(server, 'PATCH', `${cmPath('hostile-a')}?force=false`, {
      body: { data: { a: 'changed' } },
      contentType: 'application/merge-patch+json',
    });
    invalidOption(merge, 'PatchOptions', 'force', 'Forbidden: may not be specified for non-apply patch');
    const apply = await kubeJson(server, 'PATCH', cmPath('hostile-a'), { body: labelled('hostile-a'), contentType: 'application/apply-patch+yaml' });
    invalidOption(apply, 'PatchOptions', 'fieldManager', 'Required value: is required for apply patch');
    assert.deepEqual((await kubeJson(server, 'GET', cmPath('hostile-a'))).body.data, { a: '1' });
  });

  it('10,000 levels of nesting are a 400, not a crash', async () => {
    const { server } = ctx();
    const created = await kubeJson(server, 'POST', cmPath(), { body: `{"metadata":{"name":"hostile-deep"},"zzz":${deep(10_000)}}` });
    refused(created, 400, /exceeded max depth/);
    const patched = await kubeJson(server, 'PATCH', cmPath('hostile-a'), { body: `{"zzz":${deep(10_000)}}`, contentType: 'application/merge-patch+json' });
    // 1.20's merge patch fails inside its JSON patch library (500 "Invalid JSON Patch").
    assert.equal(patched.status, differs(ctx(), { real: 500, standIn: 400 }), patched.text);
    assert.equal((await kubeJson(server, 'GET', cmPath('hostile-deep'))).status, 404);
  });

  it('a patch that removes metadata is refused and the object stays', async () => {
    const { server } = ctx();
    const before = await kubeJson(server, 'GET', cmPath('hostile-a'));
    const undeterminable = 'the name of the object (hostile-a based on URL) was undeterminable: name must be provided';
    for (const path of ['/metadata', '/metadata/name']) {
      refused(
        await kubeJson(server, 'PATCH', cmPath('hostile-a'), { body: [{ op: 'remove', path }], contentType: 'application/json-patch+json' }),
        400,
        undeterminable,
      );
    }
    refused(
      await kubeJson(server, 'PATCH', cmPath('hostile-a'), { body: { metadata: null }, contentType: 'application/merge-patch+json' }),
      400,
      undeterminable,
    );
    const after = await kubeJson(server, 'GET', cmPath('hostile-a'));
    assert.deepEqual(after.body.metadata, before.body.metadata);
  });

  it('server-side apply needs apiVersion and kind', async () => {
    const { server } = ctx();
    const apply = (name: string, body: Record<string, unknown>): Promise<Answer> =>
      kubeJson(server, 'PATCH', `${cmPath(name)}?fieldManager=hostile`, {
        body: { metadata: { name }, data: { x: 'y' }, ...body },
        contentType: 'application/apply-patch+yaml',
      });
    refused(await apply('hostile-ssa', {}), 400, 'Incorrect version specified in apply patch. Specified patch version: , expected: v1');
    refused(
      await apply('hostile-ssa', { apiVersion: 'apps/v1', kind: 'ConfigMap' }),
      400,
      'Incorrect version specified in apply patch. Specified patch version: apps/v1, expected: v1',
    );
    // Without a kind 1.20 fails while typing the patch (500); the stand-in calls it the client's fault.
    refused(await apply('hostile-ssa', { apiVersion: 'v1' }), differs(ctx(), { real: 500, standIn: 400 }), /no corresponding type for \/v1, Kind=/);
    refused(await apply('hostile-a', {}), 400, /Incorrect version specified in apply patch/);
    assert.equal((await kubeJson(server, 'GET', cmPath('hostile-ssa'))).status, 404);
  });

  it('annotations may hold 256 KiB in all, finalizers must be qualified names', async () => {
    const { server } = ctx();
    const withMeta = (name: string, metadata: Record<string, unknown>): Promise<Answer> =>
      kubeJson(server, 'POST', cmPath(), { body: { metadata: { name, ...metadata } } });
    const tooLong = await withMeta('hostile-ann', { annotations: { a: 'x'.repeat(300 * 1024) } });
    refused(tooLong, 422, 'ConfigMap "hostile-ann" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');
    assert.deepEqual((tooLong.body.details as { causes: unknown[] }).causes, [
      { reason: 'FieldValueTooLong', message: 'Too long: must have at most 262144 bytes', field: 'metadata.annotations' },
    ]);
    assert.equal((await withMeta('hostile-ann-edge', { annotations: { a: 'x'.repeat(256 * 1024 - 1) } })).status, 201);
    refused(await withMeta('hostile-ann-over', { annotations: { a: 'x'.repeat(256 * 1024) } }), 422, /Too long: must have at most 262144 bytes/);
    const bad = await withMeta('hostile-fin', { finalizers: ['bad finalizer!'] });
    refused(bad, 422, /metadata\.finalizers: Invalid value: "bad finalizer!": name part must consist of alphanumeric characters/);
    refused(
      await withMeta('hostile-fin2', { finalizers: ['plain'] }),
      422,
      'ConfigMap "hostile-fin2" is invalid: metadata.finalizers[0]: Invalid value: "plain": name is neither a standard finalizer name nor is it fully qualified',
    );
    for (const name of ['hostile-fin', 'hostile-fin2', 'hostile-ann', 'hostile-ann-over'])
      assert.equal((await kubeJson(server, 'GET', cmPath(name))).status, 404, name);
  });

  it('a Lease duration beyond int32 is refused at decoding', async () => {
    const { server } = ctx();
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
    const lease = (name: string, spec: string): Promise<Answer> => kubeJson(server, 'POST', leases, { body: `{"metadata":{"name":"${name}"},"spec":${spec}}` });
    for (const value of ['2147483648', '9007199254740992', '-2147483649']) {
      const res = await lease('hostile-lease', `{"leaseDurationSeconds":${value}}`);
      refused(res, 400, /^Lease in version "v1" cannot be handled as a Lease: .*leaseDurationSeconds/i);
      assert.equal(res.body.reason, 'BadRequest');
    }
    refused(await lease('hostile-lease', '{"leaseTransitions":2147483648}'), 400, /leaseTransitions/i);
    assert.equal((await kubeJson(server, 'GET', `${leases}/hostile-lease`)).status, 404);
    assert.equal((await lease('hostile-lease-max', '{"leaseDurationSeconds":2147483647}')).status, 201);
  });

  it('a claim must request more than zero storage, as a quantity', async () => {
    const { server } = ctx();
    const claim = (name: string, storage: string): Promise<Answer> =>
      kubeJson(server, 'POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
        body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } },
      });
    for (const [storage, shown] of [
      ['0', '0'],
      ['0Gi', '0'],
      ['-1Gi', '-1Gi'],
    ]) {
      refused(
        await claim('hostile-claim', storage),
        422,
        `PersistentVolumeClaim "hostile-claim" is invalid: spec.resources[storage]: Invalid value: "${shown}": must be greater than zero`,
      );
    }
    refused(await claim('hostile-claim', 'lots'), 400, /quantities must match the regular expression/);
    assert.equal((await kubeJson(server, 'GET', `/api/v1/namespaces/${NS}/persistentvolumeclaims/hostile-claim`)).status, 404);
  });
};
