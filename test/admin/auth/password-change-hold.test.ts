import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heldForPasswordChange, isOwnPasswordEdit, readsOnly, USER_UPDATE_TEMPLATE } from '../../../admin/auth/password-change-hold.js';

const route = (method: 'get' | 'post' | 'patch' | 'delete', template: string, openDuringPasswordChange?: boolean) => ({
  method,
  template,
  openDuringPasswordChange,
});

describe('what a pending password change holds back', () => {
  it('reads are GETs and POST searches', () => {
    assert.equal(readsOnly(route('get', '/api/v1/system-manage/menus/tree')), true);
    assert.equal(readsOnly(route('post', '/api/v1/system-manage/users/search')), true);
    assert.equal(readsOnly(route('post', '/api/v1/system-manage/users')), false);
    assert.equal(readsOnly(route('delete', '/api/v1/system-manage/users/{id}')), false);
  });

  it('writes (the default) holds changes only; all holds everything but the open routes; off holds nothing', () => {
    const search = route('post', '/api/v1/system-manage/users/search');
    const create = route('post', '/api/v1/system-manage/users');
    const password = route('patch', '/api/v1/auth/password', true);
    assert.deepEqual(
      [search, create, password].map((r) => heldForPasswordChange('writes', r, false)),
      [false, true, false],
    );
    assert.deepEqual(
      [search, create, password].map((r) => heldForPasswordChange('all', r, false)),
      [true, true, false],
    );
    assert.deepEqual(
      [search, create, password].map((r) => heldForPasswordChange('off', r, false)),
      [false, false, false],
    );
    assert.equal(heldForPasswordChange('all', route('patch', USER_UPDATE_TEMPLATE), true), false, 'the own password edit is a way out in every mode');
  });

  it("the own password edit is the user editor saving the caller's record with a password", () => {
    const edit = route('patch', USER_UPDATE_TEMPLATE);
    assert.equal(isOwnPasswordEdit(edit, 7, 7, { password: 'new-pass-1', nickName: 'x' }), true);
    assert.equal(isOwnPasswordEdit(edit, 8, 7, { password: 'new-pass-1' }), false, 'another user');
    assert.equal(isOwnPasswordEdit(edit, 7, 7, { nickName: 'x' }), false, 'no password');
    assert.equal(isOwnPasswordEdit(edit, 7, 7, { password: '' }), false);
    assert.equal(isOwnPasswordEdit(edit, 7, 7, null), false);
    assert.equal(isOwnPasswordEdit(route('delete', USER_UPDATE_TEMPLATE), 7, 7, { password: 'x-pass-1' }), false);
  });
});
