import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidSpecError, parseDatabaseCluster } from '../../api/crd/validate.js';
import { sampleCluster } from './fixtures.js';

function parseSpec(spec: Record<string, unknown>, name = 'demo') {
  return parseDatabaseCluster({ metadata: { name, namespace: 'db', uid: 'u1' }, spec });
}

describe('DatabaseCluster spec', () => {
  it('fills every default from the schema', () => {
    const { spec } = sampleCluster();
    assert.equal(spec.instances, 3);
    assert.equal(spec.postgresVersion, 15);
    assert.deepEqual(spec.storage, { size: '1Gi' });
    assert.deepEqual(spec.ha, {
      ttl: 30,
      loopWait: 10,
      retryTimeout: 10,
      maximumLagOnFailover: 1048576,
      synchronousMode: 'off',
      synchronousNodeCount: 1,
      failsafeMode: false,
      primaryHangTimeout: 30,
    });
    assert.equal(spec.exporter.enabled, true);
    assert.deepEqual(spec.monitoring.serviceMonitor, { enabled: false, labels: {}, interval: '30s' });
    assert.deepEqual(spec.bootstrap, { database: 'app', owner: 'app' });
    assert.equal(spec.scheduling.podAntiAffinity, 'preferred');
    assert.deepEqual(spec.postgresql, { parameters: {}, pg_hba: [] });
  });

  it('rejects invalid fields with the path in the message', () => {
    assert.throws(
      () => parseSpec({ instances: 0 }),
      (err: unknown) => err instanceof InvalidSpecError && /spec\.instances/.test(err.message),
    );
    assert.throws(() => parseSpec({ instances: 'three' }), /spec\.instances/);
    assert.throws(() => parseSpec({ ha: { primaryHangTimeout: 3 } }), /spec\.ha\.primaryHangTimeout: must be 0 \(never\) or 5 to 3600/);
    assert.equal(parseSpec({ ha: { primaryHangTimeout: 0 } }).spec.ha.primaryHangTimeout, 0);
    assert.throws(() => parseSpec({ storage: { size: 'lots' } }), /spec\.storage\.size: must be a storage size/);
    assert.throws(() => parseSpec({ ha: { synchronousMode: 'sometimes' } }), /spec\.ha\.synchronousMode/);
    assert.throws(() => parseSpec({ resources: { limits: { cpu: 'fast' } } }), /spec\.resources\.limits\.cpu/);
  });

  it('refuses storage sizes outside 64Mi..64Ti and accepts the usual forms', () => {
    for (const size of ['0', '0Gi', '1k', '63Mi', '65Ti', '99999999999999999999Ei']) {
      assert.throws(() => parseSpec({ storage: { size } }), /spec\.storage\.size: must be between 64Mi and 64Ti/, size);
    }
    for (const size of ['-1Gi', '1e9', '10 Gi', '1'.repeat(30)]) assert.throws(() => parseSpec({ storage: { size } }), /spec\.storage\.size/, size);
    for (const size of ['64Mi', '67108864', '1.5Gi', '10G', '500Gi', '64Ti']) assert.equal(parseSpec({ storage: { size } }).spec.storage.size, size);
  });

  it('refuses a bad storage.autoGrow with the field named, and defaults threshold and step', () => {
    assert.throws(
      () => parseSpec({ storage: { size: '2Gi', autoGrow: { max: '1Gi' } } }),
      /spec\.storage\.autoGrow\.max: storage\.autoGrow\.max must not be below storage\.size/,
    );
    assert.throws(() => parseSpec({ storage: { autoGrow: { max: '2Gi', threshold: 0 } } }), /spec\.storage\.autoGrow\.threshold: Too small/);
    assert.throws(() => parseSpec({ storage: { autoGrow: { max: '2Gi', threshold: 100 } } }), /spec\.storage\.autoGrow\.threshold: Too big/);
    assert.throws(() => parseSpec({ storage: { autoGrow: { max: '2Gi', step: '0%' } } }), /spec\.storage\.autoGrow\.step: must be a percentage/);
    assert.throws(() => parseSpec({ storage: { autoGrow: { threshold: 80 } } }), /spec\.storage\.autoGrow\.max/);
    assert.deepEqual(parseSpec({ storage: { autoGrow: { max: '4Gi' } } }).spec.storage.autoGrow, { threshold: 80, step: '20%', max: '4Gi' });
    assert.equal(parseSpec({ storage: { size: '1Gi', autoGrow: { max: '1Gi', step: '512Mi' } } }).spec.storage.autoGrow?.step, '512Mi');
    assert.throws(
      () => parseSpec({ walStorage: { size: '2Gi', autoGrow: { max: '1Gi' } } }),
      /spec\.walStorage\.autoGrow\.max: walStorage\.autoGrow\.max must not be below walStorage\.size/,
    );
    assert.throws(() => parseSpec({ walStorage: { size: '1Mi' } }), /spec\.walStorage\.size: must be between 64Mi and 64Ti/);
    assert.equal(parseSpec({ walStorage: { size: '1Gi' } }).spec.walStorage?.size, '1Gi');
  });

  it('refuses resource quantities that are not non-negative quantities', () => {
    for (const [field, value] of [
      ['cpu', 'lots'],
      ['memory', '-1Gi'],
      ['cpu', -1],
      ['cpu', 0.5],
      ['cpu', 1e300],
    ] as const) {
      assert.throws(() => parseSpec({ resources: { requests: { [field]: value } } }), new RegExp(`spec\\.resources\\.requests\\.${field}`), String(value));
    }
    const good = parseSpec({ resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: 2, memory: '1.5e9', 'hugepages-2Mi': 0 } } });
    assert.deepEqual(good.spec.resources.limits, { cpu: 2, memory: '1.5e9', 'hugepages-2Mi': 0 });
  });

  it('refuses cluster names that are not RFC 1035 labels (they prefix Service names)', () => {
    for (const name of ['a.b', '1abc', 'ab-', 'Upper']) assert.throws(() => parseSpec({}, name), /metadata\.name: must be an RFC 1035 label/, name);
    assert.doesNotThrow(() => parseSpec({}, 'a-1'));
  });

  it('refuses parameters ha-node sets itself and names PostgreSQL would not parse, naming the parameter', () => {
    assert.throws(
      () => parseSpec({ postgresql: { parameters: { Listen_Addresses: '*' } } }),
      /spec\.postgresql\.parameters\.Listen_Addresses: is managed by ha-node/,
    );
    assert.throws(
      () => parseSpec({ postgresql: { parameters: { 'work-mem': '8MB' } } }),
      /spec\.postgresql\.parameters\.work-mem: is not a valid parameter name/,
    );
    assert.doesNotThrow(() => parseSpec({ postgresql: { parameters: { work_mem: '8MB', 'auto_explain.log_min_duration': '1s' } } }));
  });

  it('applies the cross-field rules the CRD states in CEL', () => {
    assert.throws(() => parseSpec({ ha: { ttl: 20, loopWait: 10, retryTimeout: 10 } }), /loopWait \+ 2\*retryTimeout must be <= ttl/);
    assert.doesNotThrow(() => parseSpec({ ha: { ttl: 30, loopWait: 10, retryTimeout: 10 } }));
    assert.throws(
      () => parseSpec({ instances: 2, ha: { synchronousMode: 'on', synchronousNodeCount: 2 } }),
      /synchronousNodeCount must be less than instances/,
    );
    assert.doesNotThrow(() => parseSpec({ instances: 3, ha: { synchronousMode: 'on', synchronousNodeCount: 2 } }));
    assert.throws(() => parseSpec({ switchover: { targetInstance: 'other-1' } }), /must name an instance of this cluster/);
    assert.throws(() => parseSpec({}, 'x'.repeat(41)), /metadata\.name: must be at most 40/);
  });
});
