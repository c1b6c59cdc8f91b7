import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'business');
const P = '/api/v1/business/probe';

describe('admin permissions: API, button and role checks, business modules, generic resource router', () => {
  let h: Harness;
  let superToken: string;
  const tokens: Record<string, string> = {};

  /** Grants the listed probe routes ("method template") to a role. */
  const grant = async (roleCode: string, routes: string[]): Promise<void> => {
    for (const route of routes) {
      const [method, path] = route.split(' ');
      const rows = await h.sql(
        'INSERT INTO role_apis (role_id, api_id) SELECT r.id, a.id FROM roles r, apis a WHERE r.role_code = $1 AND a.api_method = $2 AND a.api_path = $3 RETURNING api_id',
        [roleCode, method, P + path],
      );
      assert.equal(rows.length, 1, `api row for ${route}`);
    }
  };

  before(async () => {
    h = await startHarness({ BUSINESS_MODULES_DIR: fixtures });
    superToken = (await h.login('admin', ADMIN_PASSWORD)).token;
    await h.sql(`INSERT INTO roles (role_name, role_code) VALUES ('probe a', 'R_PROBE_A'), ('probe b', 'R_PROBE_B'), ('probe off', 'R_PROBE_OFF')`);
    await h.sql(`UPDATE roles SET status_type = '2' WHERE role_code = 'R_PROBE_OFF'`);
    await h.sql(`INSERT INTO buttons (button_code) VALUES ('B_PROBE_A'), ('B_PROBE_B'), ('B_PROBE_NOTE_CREATE')`);
    await h.sql(
      `INSERT INTO role_buttons SELECT r.id, b.id FROM roles r, buttons b WHERE r.role_code = 'R_PROBE_A' AND b.button_code IN ('B_PROBE_A', 'B_PROBE_NOTE_CREATE')`,
    );
    await h.sql(`INSERT INTO role_buttons SELECT r.id, b.id FROM roles r, buttons b WHERE r.role_code = 'R_PROBE_B' AND b.button_code = 'B_PROBE_B'`);
    const common = [
      'get /resources/{id}',
      'get /users',
      'post /buttons/any',
      'post /buttons/all',
      'post /roles/any',
      'post /roles/all',
      'post /notes',
      'post /notes/search',
    ];
    await grant('R_PROBE_A', common);
    await grant('R_PROBE_B', common);
    await grant('R_PROBE_OFF', common);
    const users: [string, string[]][] = [
      ['p-none', []],
      ['p-a', ['R_PROBE_A']],
      ['p-b', ['R_PROBE_B']],
      ['p-ab', ['R_PROBE_A', 'R_PROBE_B']],
      ['p-off', ['R_PROBE_OFF']],
    ];
    for (const [name, roles] of users) {
      await h.createUser(name, 'pass-123', roles);
      tokens[name] = (await h.login(name, 'pass-123')).token;
    }
  });
  after(async () => h?.stop());

  const code = async (user: string, method: string, path: string, body?: unknown): Promise<string> =>
    (await h.call(method, P + path, { token: user === 'super' ? superToken : tokens[user], body })).code;

  it('mounts every business module folder at /api/v1/business/<module> and records its APIs', async () => {
    const rows = await h.sql<{ api_path: string; tags: string[] }>(
      `SELECT api_path, tags FROM apis WHERE api_path LIKE '/api/v1/business/probe/%' ORDER BY api_path`,
    );
    assert.ok(rows.some((r) => r.api_path === `${P}/resources/{id}`));
    assert.ok(
      rows.some((r) => r.api_path === `${P}/notes/{id}`),
      'generic resource routes are registered',
    );
    assert.ok(rows.every((r) => r.tags.includes('probe') || r.tags.includes('notes')));
    assert.equal((await h.call('GET', `${P}/public-ping`)).code, '0000', 'public routes need no token');
  });

  it('R_SUPER passes every check, including APIs it holds no grant for', async () => {
    for (const [method, path] of [
      ['GET', '/users-extra'],
      ['POST', '/resources/sync'],
      ['POST', '/buttons/all'],
      ['POST', '/roles/all'],
    ]) {
      assert.equal(await code('super', method, path), '0000', `${method} ${path}`);
    }
  });

  it('2207 for a user with no role, and for a user whose only role is disabled', async () => {
    assert.equal(await code('p-none', 'GET', '/users'), '2207');
    assert.equal(await code('p-off', 'GET', '/users'), '2207', 'disabled roles are not loaded');
    assert.equal(await code('p-none', 'GET', '/auth-only'), '0000', 'the authentication guard does not check roles');
  });

  it('exact template match: /resources/{id} does not grant /resources/sync; /users does not grant /users-extra', async () => {
    assert.equal(await code('p-a', 'GET', '/resources/anything'), '0000');
    assert.equal(await code('p-a', 'POST', '/resources/sync'), '2201');
    assert.equal(await code('p-a', 'GET', '/users'), '0000');
    assert.equal(await code('p-a', 'GET', '/users-extra'), '2201');
  });

  it('2200 for a granted API whose status is disable; enable again passes', async () => {
    await h.sql(`UPDATE apis SET status_type = '2' WHERE api_method = 'get' AND api_path = $1`, [`${P}/users`]);
    assert.equal(await code('p-a', 'GET', '/users'), '2200');
    assert.equal(await code('super', 'GET', '/users'), '0000');
    await h.sql(`UPDATE apis SET status_type = '1' WHERE api_method = 'get' AND api_path = $1`, [`${P}/users`]);
    assert.equal(await code('p-a', 'GET', '/users'), '0000');
  });

  it('2201 for a matched route that is not in the API table', async () => {
    await grant('R_PROBE_A', ['get /users-extra']);
    assert.equal(await code('p-a', 'GET', '/users-extra'), '0000');
    await h.sql(`DELETE FROM apis WHERE api_method = 'get' AND api_path = $1`, [`${P}/users-extra`]);
    assert.equal(await code('p-a', 'GET', '/users-extra'), '2201');
  });

  it('buttons: any-of gives 2203 when none is held, all-of gives 2202 when one is missing', async () => {
    await h.createUser('p-a-nobtn', 'pass-123', []);
    await h.sql(`INSERT INTO roles (role_name, role_code) VALUES ('probe c', 'R_PROBE_C')`);
    await grant('R_PROBE_C', ['post /buttons/any', 'post /buttons/all', 'post /roles/any']);
    await h.sql(`INSERT INTO user_roles SELECT u.id, r.id FROM users u, roles r WHERE u.user_name = 'p-a-nobtn' AND r.role_code = 'R_PROBE_C'`);
    const nobtn = (await h.login('p-a-nobtn', 'pass-123')).token;
    assert.equal((await h.call('POST', `${P}/buttons/any`, { token: nobtn })).code, '2203');
    assert.equal(await code('p-a', 'POST', '/buttons/any'), '0000');
    assert.equal(await code('p-a', 'POST', '/buttons/all'), '2202');
    assert.equal(await code('p-ab', 'POST', '/buttons/all'), '0000');
  });

  it('roles: any-of gives 2205 when none is held, all-of gives 2204 when one is missing', async () => {
    const c = (await h.login('p-a-nobtn', 'pass-123')).token;
    assert.equal((await h.call('POST', `${P}/roles/any`, { token: c })).code, '2205');
    assert.equal(await code('p-b', 'POST', '/roles/any'), '0000');
    assert.equal(await code('p-a', 'POST', '/roles/all'), '2204');
    assert.equal(await code('p-ab', 'POST', '/roles/all'), '0000');
  });

  it('denials are audited with the template and code', async () => {
    const denial = h.logs.find((l) => l.action === 'permission.denied' && l.resultCode === '2201' && l.template === `${P}/resources/sync`);
    assert.ok(denial, 'permission.denied audit record');
  });

  it('request context helpers see the authenticated user', async () => {
    const reply = await h.call<Record<string, unknown>>('GET', `${P}/context`, { token: tokens['p-a'], headers: { 'x-request-id': 'ctx-check-1' } });
    const id = (await h.sql<{ id: number }>(`SELECT id FROM users WHERE user_name = 'p-a'`))[0].id;
    assert.deepEqual(reply.data, { userId: id, isSuper: false, hasProbeA: true, hasButtonA: true, requestId: 'ctx-check-1' });
  });

  it('background tasks run after the response', async () => {
    assert.equal((await h.call('POST', `${P}/background`, { token: superToken })).code, '0000');
    const deadline = Date.now() + 5000;
    while ((await h.sql(`SELECT 1 FROM probe_notes WHERE title = 'from background'`)).length === 0) {
      assert.ok(Date.now() < deadline, 'the task ran');
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  describe('generic resource router (soft delete, tree, button-restricted writes)', () => {
    const notes = (method: string, path: string, body?: unknown, token = superToken) =>
      h.call<Record<string, unknown>>(method, `${P}/notes${path}`, { token, body });

    it('create is restricted by its button code', async () => {
      assert.equal((await notes('POST', '', { title: 'from b' }, tokens['p-b'])).code, '2203');
      assert.equal((await notes('POST', '', { title: 'from a' }, tokens['p-a'])).code, '0000');
    });

    it('tree nests children; soft delete hides rows but keeps them', async () => {
      const root = await notes('POST', '', { title: 'root', rank: 1 });
      const child = await notes('POST', '', { title: 'child', parent_id: root.data.id, rank: 2 });
      assert.equal(child.data.parentId, root.data.id);
      const tree = await notes('GET', '/tree');
      const rootNode = (tree.data as unknown as Record<string, unknown>[]).find((n) => n.id === root.data.id) as Record<string, unknown>;
      assert.deepEqual(
        (rootNode.children as Record<string, unknown>[]).map((c) => c.title),
        ['child'],
      );
      assert.equal((await notes('DELETE', `/${child.data.id as string}`)).code, '0000');
      assert.equal((await notes('GET', `/${child.data.id as string}`)).code, '1101');
      assert.equal((await notes('DELETE', `/${child.data.id as string}`)).code, '1101', 'deleting twice finds nothing');
      const kept = await h.sql<{ deleted_at: Date | null }>('SELECT deleted_at FROM probe_notes WHERE id = $1', [h.admin.services.ids.decode(child.data.id)]);
      assert.ok(kept[0].deleted_at instanceof Date, 'the row stays with deleted_at set');
      const search = await h.call<{ records: Record<string, unknown>[]; total: number }>('POST', `${P}/notes/search`, {
        token: superToken,
        body: { title: 'child' },
      });
      assert.equal(search.data.total, 0);
    });

    it('batch delete reports what it deleted', async () => {
      const a = await notes('POST', '', { title: 'batch a' });
      const b = await notes('POST', '', { title: 'batch b' });
      const reply = await h.call<{ deletedCount: number; deletedIds: string[] }>('DELETE', `${P}/notes`, {
        token: superToken,
        body: { ids: [a.data.id, b.data.id] },
      });
      assert.equal(reply.data.deletedCount, 2);
      assert.deepEqual(new Set(reply.data.deletedIds), new Set([a.data.id, b.data.id]));
    });
  });
});
