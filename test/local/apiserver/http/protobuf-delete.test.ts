import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeJson, startTestApiServer, type TestApiServer } from '../../../support/kube.js';

/**
 * DELETE with a protobuf DeleteOptions body, as client-go's typed clients send it (helm uninstall
 * deleting its release Secrets): the options are decoded and honoured, not refused with a 415.
 * The body is built with the protobuf wire format of meta/v1 DeleteOptions (generated.proto).
 */
const varint = (n: number): Buffer => {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
};
const bytesField = (number: number, value: Buffer | string): Buffer => {
  const data = Buffer.isBuffer(value) ? value : Buffer.from(value);
  return Buffer.concat([varint((number << 3) | 2), varint(data.length), data]);
};
const intField = (number: number, value: number): Buffer => Buffer.concat([varint(number << 3), varint(value)]);

interface Options {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  dryRun?: string[];
}

/** `k8s\0` + Unknown{typeMeta{apiVersion, kind}, raw DeleteOptions}. */
function deleteOptionsBody(options: Options): Buffer {
  const parts: Buffer[] = [];
  if (options.gracePeriodSeconds !== undefined) parts.push(intField(1, options.gracePeriodSeconds));
  if (options.preconditions) {
    const pre = [
      options.preconditions.uid && bytesField(1, options.preconditions.uid),
      options.preconditions.resourceVersion && bytesField(2, options.preconditions.resourceVersion),
    ];
    parts.push(bytesField(2, Buffer.concat(pre.filter((p): p is Buffer => Boolean(p)))));
  }
  if (options.propagationPolicy) parts.push(bytesField(4, options.propagationPolicy));
  for (const d of options.dryRun ?? []) parts.push(bytesField(5, d));
  const typeMeta = Buffer.concat([bytesField(1, 'v1'), bytesField(2, 'DeleteOptions')]);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytesField(1, typeMeta), bytesField(2, Buffer.concat(parts))]);
}

describe('API server stand-in: protobuf DeleteOptions', () => {
  let server: TestApiServer;
  const path = '/api/v1/namespaces/default/secrets/release';
  const send = (options: Options) => kubeJson(server, 'DELETE', path, { body: deleteOptionsBody(options), contentType: 'application/vnd.kubernetes.protobuf' });
  const exists = async () => (await kubeJson(server, 'GET', path)).status === 200;

  before(async () => {
    server = await startTestApiServer();
  });
  after(() => server?.close());

  it('honours preconditions, dryRun and the propagation policy of the protobuf body', async () => {
    const created = await kubeJson(server, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'release' }, stringData: { a: 'b' } },
    });
    assert.equal(created.status, 201, created.text);
    const meta = created.body.metadata as { uid: string; resourceVersion: string };

    const wrongUid = await send({ preconditions: { uid: 'not-the-uid' } });
    assert.equal(wrongUid.status, 409, wrongUid.text);
    assert.match(String(wrongUid.body.message), /Precondition failed: UID in precondition: not-the-uid/);
    assert.ok(await exists());

    const dryRun = await send({ dryRun: ['All'], preconditions: { uid: meta.uid } });
    assert.equal(dryRun.status, 200, dryRun.text);
    assert.ok(await exists(), 'a dry run deletes nothing');

    const badPolicy = await send({ propagationPolicy: 'Sometimes' });
    assert.equal(badPolicy.status, 422, badPolicy.text);
    assert.match(String(badPolicy.body.message), /propagationPolicy: Unsupported value: "Sometimes"/);
    const badDryRun = await send({ dryRun: ['Some'] });
    assert.ok(badDryRun.status >= 400 && badDryRun.status < 500, badDryRun.text);
    assert.match(String(badDryRun.body.message), /dryRun/);
    assert.ok(await exists(), 'refused deletes delete nothing');

    const deleted = await send({
      preconditions: { uid: meta.uid, resourceVersion: meta.resourceVersion },
      propagationPolicy: 'Background',
      gracePeriodSeconds: 0,
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(await exists(), false);
  });

  it('still refuses protobuf kinds it cannot decode, with a 415 naming the kind', async () => {
    const typeMeta = Buffer.concat([bytesField(1, 'v1'), bytesField(2, 'Pod')]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytesField(1, typeMeta), bytesField(2, Buffer.alloc(0))]);
    const refused = await kubeJson(server, 'POST', '/api/v1/namespaces/default/pods', { body, contentType: 'application/vnd.kubernetes.protobuf' });
    assert.equal(refused.status, 415);
    assert.match(String(refused.body.message), /protobuf: kind Pod is not supported/);
  });
});
