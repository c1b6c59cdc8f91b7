import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { kubeRequest, startTestApiServer, type TestApiServer } from '../support/kube.js';
import { ADMIN_PASSWORD, startHarness, type Harness } from './support.js';

const B = '/api/v1/business/database-clusters';
type Rec = Record<string, unknown>;

describe('admin business module: DatabaseClusters through the Kubernetes API', () => {
  let kube: TestApiServer;
  let h: Harness;
  let token: string;

  before(async () => {
    kube = await startTestApiServer();
    for (const file of ['keelson.io_databaseclusters.yaml', 'keelson.io_databases.yaml']) {
      const crd = parse(readFileSync(new URL(`../../crds/${file}`, import.meta.url), 'utf8')) as unknown;
      assert.equal((await kubeRequest(kube, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
    }
    for (let i = 0; i < 100 && (await kubeRequest(kube, 'GET', '/apis/keelson.io/v1')).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
    h = await startHarness({ KUBECONFIG: kube.kubeconfigPath });
    token = (await h.login('admin', ADMIN_PASSWORD)).token;
  });
  after(async () => {
    await h?.stop();
    await kube?.close();
  });

  const call = <T = Rec>(method: string, path: string, body?: unknown, as = token) => h.call<T>(method, B + path, { token: as, body });

  it('is mounted automatically with its routes in the API table and its buttons seeded', async () => {
    const apis = await h.sql<{ api_path: string }>(`SELECT api_path FROM apis WHERE api_path LIKE '/api/v1/business/database-clusters/%'`);
    assert.ok(apis.some((a) => a.api_path === `${B}/clusters/{namespace}/{name}/scale`));
    assert.equal((await h.sql(`SELECT 1 FROM buttons WHERE button_code LIKE 'B_DBC_CLUSTER_%'`)).length, 3);
  });

  it('creates, lists, reads, scales, patches and deletes a cluster', async () => {
    const created = await call('POST', '/clusters', { namespace: 'default', name: 'demo', spec: { instances: 2 } });
    assert.equal(created.code, '0000', created.msg);
    assert.equal(created.data.name, 'demo');
    assert.equal(created.data.instances, 2);
    assert.equal((await call('POST', '/clusters', { namespace: 'default', name: 'demo', spec: {} })).code, '2300', 'AlreadyExists');
    await call('POST', '/clusters', { name: 'other', spec: { instances: 1 } });
    const page = await call<{ records: Rec[]; total: number }>('POST', '/clusters/search', { namespace: 'default', orderBy: ['-name'] });
    assert.equal(page.data.total, 2);
    assert.deepEqual(
      page.data.records.map((r) => r.name),
      ['other', 'demo'],
    );
    assert.equal((await call<{ total: number }>('POST', '/clusters/search', { name: 'dem' })).data.total, 1);
    const got = await call('GET', '/clusters/default/demo');
    assert.equal((got.data.spec as Rec).instances, 2);
    assert.equal((got.data.labels as Record<string, string>)['keelson.io/created-by'], 'admin');
    assert.equal((await call('POST', '/clusters/default/demo/scale', { instances: 3 })).data.instances, 3);
    // postgresVersion is fixed at creation: the API server's refusal reaches the caller as an error.
    assert.notEqual((await call('PATCH', '/clusters/default/demo', { spec: { postgresVersion: 16 } })).code, '0000');
    const patched = await call('PATCH', '/clusters/default/demo', { spec: { ha: { ttl: 40 } } });
    assert.equal(patched.data.instances, 3, 'a merge patch keeps the other fields');
    const object = await kubeRequest(kube, 'GET', '/apis/keelson.io/v1/namespaces/default/databaseclusters/demo');
    assert.equal((object.body as { spec: Rec }).spec.instances, 3, 'the change is in Kubernetes');
    assert.equal(((object.body as { spec: Rec }).spec.ha as Rec).ttl, 40, 'the patched field is in Kubernetes');
    assert.deepEqual((await call('DELETE', '/clusters/default/other')).data, { deletedId: 'default/other' });
    assert.equal((await call('GET', '/clusters/default/other')).code, '1101');
  });

  it("lists a cluster's roles and databases with what the leader applied, and no password", async () => {
    const roles = [{ name: 'readers' }, { name: 'alice', login: true, inRoles: ['readers'], passwordSecret: { name: 'alice-pw' } }];
    assert.equal((await call('POST', '/clusters', { name: 'withroles', spec: { instances: 1, roles } })).code, '0000');
    const path = '/apis/keelson.io/v1/namespaces/default/databaseclusters/withroles';
    const current = (await kubeRequest(kube, 'GET', path)).body as Rec;
    const status = {
      roles: [
        { name: 'readers', applied: true },
        { name: 'alice', applied: false, message: 'Secret "alice-pw" not found' },
      ],
    };
    assert.equal((await kubeRequest(kube, 'PUT', `${path}/status`, { body: { ...current, status } })).status, 200);
    const database = (name: string, spec: Rec) =>
      kubeRequest(kube, 'POST', '/apis/keelson.io/v1/namespaces/default/databases', {
        body: { apiVersion: 'keelson.io/v1', kind: 'Database', metadata: { name }, spec },
      });
    assert.equal(
      (await database('shop', { cluster: 'withroles', name: 'shop', owner: 'alice', extensions: [{ name: 'citext' }], schemas: [{ name: 'sales' }] })).status,
      201,
    );
    assert.equal((await database('elsewhere', { cluster: 'demo', name: 'other', owner: 'app' })).status, 201);
    const listing = await call<{ roles: Rec[]; databases: Rec[] }>('GET', '/clusters/default/withroles/roles-and-databases');
    assert.equal(listing.code, '0000', listing.msg);
    assert.deepEqual(listing.data.roles, [
      {
        name: 'readers',
        ensure: 'present',
        attributes: [],
        connectionLimit: -1,
        validUntil: null,
        inRoles: [],
        passwordSecret: null,
        applied: true,
        message: null,
      },
      {
        name: 'alice',
        ensure: 'present',
        attributes: ['login'],
        connectionLimit: -1,
        validUntil: null,
        inRoles: ['readers'],
        passwordSecret: 'alice-pw',
        applied: false,
        message: 'Secret "alice-pw" not found',
      },
    ]);
    assert.deepEqual(listing.data.databases, [
      {
        object: 'shop',
        name: 'shop',
        owner: 'alice',
        ensure: 'present',
        reclaimPolicy: 'retain',
        extensions: ['citext'],
        schemas: ['sales'],
        applied: null,
        message: null,
      },
    ]);
    assert.equal((await call('GET', '/clusters/default/nosuch/roles-and-databases')).code, '1101');
  });

  it('rejects bad input with envelope errors', async () => {
    assert.equal((await call('GET', '/clusters/Bad_NS/demo')).code, '1200');
    assert.equal((await call('POST', '/clusters', { name: 'Not A Name' })).code, '1200');
    assert.equal((await call('POST', '/clusters/default/demo/scale', { instances: 0 })).code, '1200');
    assert.equal((await call('POST', '/clusters/search', { orderBy: ['spec'] })).code, '1200');
  });

  it('is behind API permission and button codes', async () => {
    await h.createUser('dbc-admin', 'pass-123', ['R_ADMIN']);
    const admin = (await h.login('dbc-admin', 'pass-123')).token;
    assert.equal((await call('POST', '/clusters/search', {}, admin)).code, '2201');
    await h.sql(
      `INSERT INTO role_apis SELECT r.id, a.id FROM roles r, apis a WHERE r.role_code = 'R_ADMIN' AND a.api_path LIKE '/api/v1/business/database-clusters/%'`,
    );
    assert.equal((await call('POST', '/clusters/search', {}, admin)).code, '0000');
    assert.equal((await call('POST', '/clusters', { name: 'nope' }, admin)).code, '2203', 'create needs B_DBC_CLUSTER_CREATE');
    await h.sql(`INSERT INTO role_buttons SELECT r.id, b.id FROM roles r, buttons b WHERE r.role_code = 'R_ADMIN' AND b.button_code = 'B_DBC_CLUSTER_CREATE'`);
    assert.equal((await call('POST', '/clusters', { name: 'by-admin', spec: { instances: 1 } }, admin)).code, '0000');
  });

  it('shows members with lag and switches over only to a ready replica', async () => {
    assert.equal((await call('POST', '/clusters', { name: 'ha', spec: { instances: 3 } })).code, '0000');
    const early = await call('POST', '/clusters/default/ha/switchover', { targetInstance: 'ha-7' });
    assert.equal(early.code, '1200', 'before members are reported the spec names the instances');
    assert.match(early.msg, /ha-0, ha-1, ha-2/);
    const status = {
      phase: 'Healthy',
      currentPrimary: 'ha-0',
      readyInstances: 2,
      members: [
        { name: 'ha-0', role: 'primary', ready: true, state: 'running', timeline: 2 },
        { name: 'ha-1', role: 'replica', ready: true, state: 'streaming', lagBytes: 1536, timeline: 2 },
        { name: 'ha-2', role: 'replica', ready: false, state: 'starting' },
      ],
    };
    const put = await kubeRequest(kube, 'PATCH', '/apis/keelson.io/v1/namespaces/default/databaseclusters/ha/status', {
      body: { status },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const page = await call<{ records: Rec[] }>('POST', '/clusters/search', { name: 'ha' });
    const record = page.data.records.find((r) => r.name === 'ha') as Rec;
    assert.deepEqual(record.members, [
      { name: 'ha-0', role: 'primary', ready: true, state: 'running', lagBytes: null, timeline: 2 },
      { name: 'ha-1', role: 'replica', ready: true, state: 'streaming', lagBytes: 1536, timeline: 2 },
      { name: 'ha-2', role: 'replica', ready: false, state: 'starting', lagBytes: null, timeline: null },
    ]);
    const refusals: [unknown, RegExp][] = [
      [{ targetInstance: 'ha-0' }, /already the primary/],
      [{ targetInstance: 'ha-2' }, /not ready/],
      [{ targetInstance: 'other-1' }, /not an instance of ha/],
      [{ targetInstance: 'Bad Name' }, /targetInstance/],
      [{}, /targetInstance/],
    ];
    for (const [body, why] of refusals) {
      const reply = await call('POST', '/clusters/default/ha/switchover', body);
      assert.equal(reply.code, '1200', JSON.stringify(body));
      assert.match(reply.msg, why);
    }
    const done = await call('POST', '/clusters/default/ha/switchover', { targetInstance: 'ha-1' });
    assert.equal(done.code, '0000', done.msg);
    const object = await kubeRequest(kube, 'GET', '/apis/keelson.io/v1/namespaces/default/databaseclusters/ha');
    assert.deepEqual((object.body as { spec: Rec }).spec.switchover, { targetInstance: 'ha-1' }, 'the request is in Kubernetes for the operator');
    assert.equal((await call('DELETE', '/clusters/default/ha')).code, '0000');
  });

  it('reports an unreachable Kubernetes API as 4001 while the rest keeps working', async () => {
    await kube.close();
    const reply = await call('POST', '/clusters/search', {});
    assert.equal(reply.status, 200);
    assert.equal(reply.code, '4001');
    assert.equal((await h.call('GET', '/api/v1/auth/user-info', { token })).code, '0000');
  });
});
