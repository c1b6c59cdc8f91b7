import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

/**
 * Request strings PostgreSQL cannot store as sent: a NUL (U+0000) is refused by text and jsonb
 * columns alike, and a lone UTF-16 surrogate would be written as U+FFFD by the driver. Both answer
 * 1200 naming the field, before any statement runs, and change nothing.
 */
const SM = '/api/v1/system-manage';
const NUL = '\u0000';
const LONE = 'a\ud800b';

describe('admin text input PostgreSQL cannot store', () => {
  let h: Harness;
  let token: string;
  const call = (method: string, path: string, body?: unknown) => h.call(method, path, { token, body });
  const userRows = async () => JSON.stringify(await h.sql('SELECT id, user_name, nick_name, user_email, password, status_type FROM users ORDER BY id'));

  before(async () => {
    h = await startHarness();
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => h?.stop());

  it('a NUL in a search filter answers 1200 naming the field', async () => {
    for (const [path, body, field] of [
      [`${SM}/users/search`, { userName: NUL }, 'userName'],
      [`${SM}/users/search`, { user_email: `x${NUL}y` }, 'userEmail'],
      [`${SM}/roles/search`, { roleCode: NUL }, 'roleCode'],
      [`${SM}/users/search`, { byUserRoleCodeList: ['R_ADMIN', NUL] }, 'byUserRoleCodeList.1'],
    ] as const) {
      const reply = await call('POST', path, body);
      assert.equal(reply.status, 200);
      assert.equal(reply.code, '1200', `${path} ${JSON.stringify(body)}: ${reply.msg}`);
      assert.ok(reply.msg.startsWith(`${field}:`), `message names ${field}: ${reply.msg}`);
    }
    assert.equal(h.logs.filter((l) => l.level === 50).length, 0, 'nothing was logged as an error');
  });

  it('a lone surrogate answers 1200 rather than being stored as U+FFFD', async () => {
    const reply = await call('POST', `${SM}/users/search`, { nickName: LONE });
    assert.equal(reply.code, '1200', reply.msg);
    assert.match(reply.msg, /^nickName:/);
    const before = await userRows();
    const create = await call('POST', `${SM}/users`, { userName: 'surrogate', password: 'pass-1234', nickName: LONE });
    assert.equal(create.code, '1200', create.msg);
    assert.equal(await userRows(), before);
  });

  it('create and update bodies with a NUL change nothing', async () => {
    const before = await userRows();
    const create = await call('POST', `${SM}/users`, { userName: `nul${NUL}`, password: 'pass-1234' });
    assert.equal(create.code, '1200', create.msg);
    assert.match(create.msg, /^userName:/);
    const alice = await call('POST', `${SM}/users`, { userName: 'alice', password: 'pass-1234' });
    assert.equal(alice.code, '0000', alice.msg);
    const id = (alice.data as { id: string }).id;
    const afterCreate = await userRows();
    assert.notEqual(afterCreate, before);
    const update = await call('PATCH', `${SM}/users/${id}`, { userName: 'alice', nickName: `A${NUL}` });
    assert.equal(update.code, '1200', update.msg);
    assert.match(update.msg, /^nickName:/);
    assert.equal(await userRows(), afterCreate, 'the refused update changed nothing');
    const menu = await call('POST', `${SM}/menus`, { menuName: 'm', routeName: 'm', routePath: '/m', routeParam: [{ key: `k${NUL}`, value: 'v' }] });
    assert.equal(menu.code, '1200', menu.msg);
    assert.match(menu.msg, /^routeParam\.0\.key:/);
  });

  it('login, query parameters and dictionary types refuse a NUL', async () => {
    const login = await h.call('POST', '/api/v1/auth/login', { body: { userName: `admin${NUL}`, password: ADMIN_PASSWORD } });
    assert.equal(login.code, '1200', login.msg);
    assert.match(login.msg, /^userName:/);
    const password = await h.call('POST', '/api/v1/auth/login', { body: { userName: 'admin', password: `x${NUL}` } });
    assert.equal(password.code, '1200', password.msg);
    assert.match(password.msg, /^password:/);
    const exists = await call('GET', `/api/v1/route/exists?name=${encodeURIComponent(`a${NUL}`)}`);
    assert.equal(exists.code, '1200', exists.msg);
    assert.match(exists.msg, /^name:/);
    const dict = await call('GET', `${SM}/dictionaries/${encodeURIComponent(`a${NUL}`)}/options`);
    assert.equal(dict.code, '1200', dict.msg);
  });
});
