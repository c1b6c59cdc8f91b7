import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

/** A body whose Content-Encoding does not match its bytes is the client's mistake: 1200, not 1000. */
describe('admin request bodies with a wrong Content-Encoding', () => {
  let h: Harness;
  let token: string;

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  for (const encoding of ['gzip', 'deflate', 'br']) {
    it(`Content-Encoding ${encoding} over plain JSON answers 1200 naming the body`, async () => {
      const reply = await h.call('POST', '/api/v1/system-manage/users/search', { token, raw: '{"current":1}', headers: { 'content-encoding': encoding } });
      assert.equal(reply.status, 200);
      assert.equal(reply.code, '1200', reply.msg);
      assert.match(reply.msg, /body/);
    });
  }

  it('an unknown Content-Encoding answers 1200 too', async () => {
    const reply = await h.call('POST', '/api/v1/auth/login', { raw: '{}', headers: { 'content-encoding': 'bogus' } });
    assert.equal(reply.code, '1200', reply.msg);
  });
});

describe('admin path parameters that are not valid percent-encoding', () => {
  let h: Harness;
  let token: string;

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  for (const segment of ['%zz', '%c0%af%2e%2e', '%']) {
    it(`/users/${segment} answers 1200, not an internal error`, async () => {
      const reply = await h.call('GET', `/api/v1/system-manage/users/${segment}`, { token });
      assert.equal(reply.status, 200);
      assert.equal(reply.code, '1200', reply.msg);
      assert.match(reply.msg, /^path:/);
    });
  }
});
