import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestApiServer, type TestApiServer } from '../support/kube.js';
import { applyCluster, applyCrds, kubectl } from './support.js';

const ns = 'admission';

/**
 * The generated CRD as `kubectl apply` meets it: each bad DatabaseCluster is refused at apply time
 * with a message naming the field, and the good ones still go through.
 */
describe('DatabaseCluster admission through kubectl apply (generated CRD on the stand-in)', () => {
  let server: TestApiServer;
  let dir: string;

  before(async () => {
    server = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'keelson-admission-'));
    assert.equal(await applyCrds(server.kubeconfigPath, dir), true, 'the stand-in takes the CRD with its CEL rules');
    await kubectl(server.kubeconfigPath, dir, 'create', 'namespace', ns);
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const apply = (name: string, spec: Record<string, unknown>) => applyCluster(server.kubeconfigPath, dir, ns, name, spec);

  async function assertRefused(name: string, spec: Record<string, unknown>, message: RegExp): Promise<void> {
    const result = await apply(name, spec);
    assert.equal(result.ok, false, `${name} ${JSON.stringify(spec)} was accepted: ${result.output}`);
    assert.match(result.output, message, `${name} ${JSON.stringify(spec)}`);
  }

  it('refuses storage sizes outside 64Mi..64Ti and sizes that are not quantities, naming spec.storage.size', async () => {
    const outOfRange = /spec\.storage\.size: Invalid value: "string": must be between 64Mi and 64Ti/;
    for (const size of ['0', '0Gi', '1k', '63Mi', '65Ti', '99999999999999999999Ei']) await assertRefused('sized', { storage: { size } }, outOfRange);
    await assertRefused('sized', { storage: { size: 'lots' } }, /spec\.storage\.size: Invalid value: "lots": spec\.storage\.size in body should match/);
    await assertRefused('sized', { storage: { size: '1'.repeat(30) } }, /spec\.storage\.size: Too long/);
  });

  it('refuses a bad storage.autoGrow and a shrinking storage.size, naming the field', async () => {
    await assertRefused(
      'grow',
      { storage: { size: '2Gi', autoGrow: { max: '1Gi' } } },
      /spec\.storage: Invalid value: "object": storage\.autoGrow\.max must not be below storage\.size/,
    );
    for (const threshold of [0, 100])
      await assertRefused('grow', { storage: { size: '1Gi', autoGrow: { max: '2Gi', threshold } } }, /spec\.storage\.autoGrow\.threshold: Invalid value/);
    await assertRefused('grow', { storage: { size: '1Gi', autoGrow: { max: '2Gi', step: '150%' } } }, /spec\.storage\.autoGrow\.step: Invalid value: "150%"/);
    await assertRefused('grow', { storage: { size: '1Gi', autoGrow: { step: '10%' } } }, /spec\.storage\.autoGrow\.max: Required value/);
    assert.equal((await apply('shrink', { storage: { size: '2Gi', autoGrow: { max: '4Gi', step: '1Gi', threshold: 75 } } })).ok, true);
    await assertRefused('shrink', { storage: { size: '1Gi' } }, /spec\.storage: Invalid value: "object": storage\.size cannot shrink: volumes only grow/);
    assert.equal((await apply('shrink', { storage: { size: '3Gi' } })).ok, true, 'growing is fine');
    await assertRefused('shrink', { storage: { size: '3Gi' }, walStorage: { size: '1Gi' } }, /walStorage can only be set when the cluster is created/);
    assert.equal((await apply('wal', { walStorage: { size: '1Gi', autoGrow: { max: '2Gi' } } })).ok, true);
    await assertRefused(
      'wal',
      { walStorage: { size: '512Mi', autoGrow: { max: '2Gi' } } },
      /spec\.walStorage: Invalid value: "object": walStorage\.size cannot shrink: volumes only grow/,
    );
    await assertRefused(
      'wal',
      { walStorage: { size: '1Gi', storageClass: 'fast', autoGrow: { max: '2Gi' } } },
      /walStorage\.storageClass cannot change after creation/,
    );
    await assertRefused('wal', {}, /walStorage can only be set when the cluster is created/);
    await assertRefused('wal2', { walStorage: { size: '2Gi', autoGrow: { max: '1Gi' } } }, /walStorage\.autoGrow\.max must not be below walStorage\.size/);
  });

  it('refuses names that are not RFC 1035 labels or longer than 40 characters, naming metadata.name', async () => {
    for (const name of ['a.b', '1abc'])
      await assertRefused(name, {}, new RegExp(`metadata\\.name: Invalid value: "${name.replace('.', '\\.')}": metadata\\.name in body should match`));
    await assertRefused('x'.repeat(41), {}, /metadata\.name: Too long/);
  });

  it('refuses resource quantities that are not non-negative quantities, naming the resource', async () => {
    await assertRefused(
      'res',
      { resources: { requests: { cpu: 'lots' } } },
      /spec\.resources\.requests\.cpu: Invalid value: "lots": spec\.resources\.requests\.cpu in body should match/,
    );
    await assertRefused('res', { resources: { limits: { memory: '-1Gi' } } }, /spec\.resources\.limits\.memory: Invalid value: "-1Gi"/);
    await assertRefused(
      'res',
      { resources: { limits: { cpu: -1 } } },
      /spec\.resources\.limits\.cpu: Invalid value: -1: spec\.resources\.limits\.cpu in body should be greater than or equal to 0/,
    );
    await assertRefused(
      'res',
      { resources: { limits: { cpu: 1e300 } } },
      /spec\.resources\.limits\.cpu: Invalid value: .*should be less than or equal to 1125899906842624/,
    );
  });

  it('refuses a parameter value with a control character, naming the parameter', async () => {
    for (const value of ['a\nb', 'tab\there']) {
      await assertRefused(
        'params',
        { postgresql: { parameters: { application_name: value } } },
        /spec\.postgresql\.parameters\.application_name: Invalid value: .*should match/,
      );
    }
  });

  it('reports the switchover rule on spec.switchover.targetInstance, not <nil>', async () => {
    const result = await apply('sw', { switchover: { targetInstance: 'other-1' } });
    assert.equal(result.ok, false);
    assert.match(
      result.output,
      /spec\.switchover\.targetInstance: Invalid value: "object": spec\.switchover\.targetInstance must name an instance of this cluster/,
    );
    assert.doesNotMatch(result.output, /<nil>/);
  });

  it('still accepts good specs at the limits', async () => {
    const good: Array<[string, Record<string, unknown>]> = [
      ['smallest', { storage: { size: '64Mi' } }],
      ['largest', { storage: { size: '64Ti' } }],
      ['fractional', { storage: { size: '1.5Gi' }, resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: 2, memory: '1.5e9' } } }],
      ['a-1', { switchover: { targetInstance: 'a-1-2' } }],
      ['x'.repeat(40), {}],
    ];
    for (const [name, spec] of good) {
      const result = await apply(name, spec);
      assert.equal(result.ok, true, `${name}: ${result.output}`);
      assert.match(result.output, /created/);
    }
  });
});
