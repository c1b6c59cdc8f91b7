import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pickLocale, requestLocale } from '../../admin/i18n/locale.js';
import { localiseMessage } from '../../admin/i18n/messages.js';

describe('admin message localisation', () => {
  it('picks the locale from Accept-Language by weight, English when nothing fits', () => {
    assert.equal(pickLocale('zh-CN,zh;q=0.9,en;q=0.8'), 'zh-CN');
    assert.equal(pickLocale('en-US,en;q=0.9,zh-CN;q=0.8'), 'en-US');
    assert.equal(pickLocale('en;q=0.5, zh-TW;q=0.7'), 'zh-CN');
    assert.equal(pickLocale('fr-FR, zh;q=0.4'), 'zh-CN', 'an unsupported first choice is skipped');
    assert.equal(pickLocale('zh;q=0, en'), 'en-US', 'q=0 means not wanted');
    for (const header of [undefined, '', 'fr', '*', ';;;,,', 'x'.repeat(600)]) assert.equal(pickLocale(header), 'en-US', String(header).slice(0, 20));
  });

  it('prefers the UI language (X-Lang) and falls back to Accept-Language', () => {
    assert.equal(requestLocale('en-US', 'zh-CN,zh;q=0.9'), 'en-US');
    assert.equal(requestLocale('zh-CN', 'en-US'), 'zh-CN');
    assert.equal(requestLocale(['zh_CN'], undefined), 'zh-CN');
    for (const ui of [undefined, '', 'fr-FR', 'x'.repeat(100)]) assert.equal(requestLocale(ui, 'zh-CN'), 'zh-CN', String(ui).slice(0, 10));
    assert.equal(requestLocale(undefined, undefined), 'en-US');
  });

  it('translates catalogued messages, keeps variable parts, and keeps English for en-US', () => {
    assert.equal(localiseMessage('created', '0000', 'zh-CN'), '创建成功');
    assert.equal(localiseMessage('OK', '0000', 'zh-CN'), 'OK');
    assert.equal(localiseMessage('permission denied', '2201', 'zh-CN'), '权限不足');
    assert.equal(localiseMessage('too many login attempts, try again in 12 s', '2500', 'zh-CN'), '登录尝试过于频繁，请 12 秒后再试');
    assert.equal(localiseMessage('removed every API grant of role R_X (3)', '0000', 'zh-CN'), '已移除角色 R_X 的全部接口权限（3 项）');
    assert.equal(localiseMessage('userName: Required', '1200', 'zh-CN'), '请求参数错误: userName: Required', 'an unknown failure keeps its detail');
    assert.equal(localiseMessage('something new', '0000', 'zh-CN'), 'something new');
    assert.equal(localiseMessage('created', '0000', 'en-US'), 'created');
  });
});
