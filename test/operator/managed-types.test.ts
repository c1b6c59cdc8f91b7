import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDatabaseObject } from '../../api/crd/database-kind.js';
import { validUntilProblem } from '../../api/crd/managed-roles.js';
import { managedRolesHash } from '../../api/crd/managed-status.js';
import { parseDatabaseCluster } from '../../api/crd/validate.js';
import { configPatch, desiredDynamicConfig } from '../../operator/builders/dynamic-config.js';
import { haNodeRules, passwordSecretNames } from '../../operator/builders/role.js';
import { rolesOutcome } from '../../operator/reconcile/managed-roles.js';
import { managedRolesCheck } from '../../sidecar/ha-node/managed/roles-check.js';
import { validateDynamicConfig } from '../../sidecar/ha-node/ops/config-validate.js';

/**
 * spec.roles and the Database kind where no API server checks them: the operator's own parse
 * (servers without CEL), ha-node's PATCH /config check, the RBAC that follows the spec, and the
 * status composed from the leader's report.
 */

const raw = (spec: Record<string, unknown>) => ({ metadata: { name: 'c', namespace: 'default', uid: 'u', generation: 3 }, spec });
const refusal = (spec: Record<string, unknown>): string => {
  try {
    parseDatabaseCluster(raw(spec));
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('spec.roles in the operator and ha-node', () => {
  it('the operator refuses what the CRD refuses, naming the field', () => {
    assert.match(refusal({ roles: [{ name: 'pg_signal' }] }), /spec\.roles\.0\.name: role name "pg_signal" is reserved/);
    assert.match(refusal({ roles: [{ name: 'replicator' }] }), /spec\.roles\.0\.name: role name "replicator" is reserved/);
    assert.match(refusal({ roles: [{ name: 'a' }, { name: 'a' }] }), /spec\.roles\.1\.name: duplicate role "a"/);
    assert.match(refusal({ roles: [{ name: 'boss', superuser: true }] }), /spec\.roles\.0\.passwordSecret: a superuser role needs passwordSecret/);
    assert.match(refusal({ roles: [{ name: 'app' }] }), /spec\.roles\.0\.name: "app" is the bootstrap owner/);
    assert.match(refusal({ roles: [{ name: 'é' }] }), /spec\.roles\.0\.name: must be an identifier/);
    assert.match(refusal({ roles: [{ name: 'x'.repeat(64) }] }), /at most 63 bytes/);
    assert.match(refusal({ roles: [{ name: 'x', connectionLimit: -5 }] }), /spec\.roles\.0\.connectionLimit/);
    assert.equal(refusal({ roles: [{ name: 'x', validUntil: '2027-02-29T00:00:00Z' }] }).includes('is not a calendar date'), true);
    assert.equal(refusal({ roles: [{ name: 'reader', login: true, validUntil: 'infinity' }] }), 'accepted');
  });

  it('validUntil is an RFC 3339 timestamp PostgreSQL reads the same way, or infinity', () => {
    for (const ok of ['infinity', '2027-01-01T00:00:00Z', '2027-06-30T23:59:59.5+02:00']) assert.equal(validUntilProblem(ok), undefined, ok);
    for (const bad of ['tomorrow', '2027-13-01T00:00:00Z', '2027-01-01', '2027-01-01T25:00:00Z', "2027-01-01T00:00:00Z'; DROP ROLE x"])
      assert.ok(validUntilProblem(bad), bad);
  });

  it('PATCH /config refuses invalid roles with the path of the problem and accepts the spec’s own', () => {
    assert.equal(managedRolesCheck([{ name: 'ok', login: true }]), undefined);
    assert.match(managedRolesCheck([{ name: 'ok' }, { name: 'pg_x' }])!, /^\[1\]\.name: role name "pg_x" is reserved/);
    const problems = validateDynamicConfig({ roles: [{ name: 'x', connectionLimit: 'many' }] });
    assert.equal(problems[0]?.field, 'roles');
    assert.match(problems[0]!.message, /\[0\]\.connectionLimit/);
  });

  it('the dynamic configuration carries the roles and drops the key when the list empties', () => {
    const cluster = parseDatabaseCluster(raw({ roles: [{ name: 'reader', passwordSecret: { name: 'reader-pw' } }] }));
    const desired = desiredDynamicConfig(cluster);
    assert.deepEqual(
      (desired.roles as { name: string }[]).map((r) => r.name),
      ['reader'],
    );
    const without = desiredDynamicConfig(parseDatabaseCluster(raw({})));
    assert.equal(without.roles, undefined);
    assert.equal(configPatch(without, desired).roles, null);
  });

  it('ha-node may get exactly the password Secrets the spec names, and list and watch Databases', () => {
    assert.equal(
      haNodeRules().some((r) => r.resources?.includes('secrets')),
      false,
      'no roles: no Secret at all',
    );
    const rules = haNodeRules(
      passwordSecretNames([{ passwordSecret: { name: 'b' } }, {}, { passwordSecret: { name: 'a' } }, { passwordSecret: { name: 'a' } }]),
    );
    assert.deepEqual(
      rules.find((r) => r.resources?.includes('secrets')),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a', 'b'] },
    );
    assert.deepEqual(rules.find((r) => r.resources?.includes('databases'))?.verbs, ['list', 'watch']);
  });

  it('status.roles and RolesReconciled follow the leader’s report, and a report for other roles is pending', () => {
    const cluster = parseDatabaseCluster(raw({ roles: [{ name: 'a' }, { name: 'b', ensure: 'absent' }] }));
    const stale = rolesOutcome(cluster, { at: 'now', rolesHash: 'other', roles: [], databases: [], statements: 0 });
    assert.equal(stale.condition?.status, 'Unknown');
    assert.equal(stale.waiting, true);
    const hash = managedRolesHash(cluster.spec.roles);
    const blocked = rolesOutcome(cluster, {
      at: 'now',
      rolesHash: hash,
      roles: [
        { name: 'a', applied: true },
        { name: 'b', applied: false, message: 'role "b" cannot be dropped because some objects depend on it' },
      ],
      databases: [],
      statements: 1,
    });
    assert.deepEqual(blocked.condition, {
      type: 'RolesReconciled',
      status: 'False',
      reason: 'NotApplied',
      message: 'b: role "b" cannot be dropped because some objects depend on it',
    });
    assert.deepEqual(
      blocked.events.map((e) => e.reason),
      ['RoleNotApplied'],
    );
    const done = rolesOutcome(cluster, {
      at: 'now',
      rolesHash: hash,
      roles: [
        { name: 'a', applied: true },
        { name: 'b', applied: true },
      ],
      databases: [],
      statements: 1,
    });
    assert.equal(done.condition?.status, 'True');
    assert.deepEqual(
      done.events.map((e) => e.reason),
      ['RolesApplied'],
    );
    const standby = parseDatabaseCluster(raw({ roles: [{ name: 'a' }], replica: { enabled: true, source: { cluster: 'other' } } }));
    const waiting = rolesOutcome(standby, undefined);
    assert.deepEqual(
      [waiting.condition?.reason, waiting.waiting, waiting.roles?.[0]?.message],
      ['Standby', false, 'a standby cluster applies the roles once it is promoted'],
    );
  });

  it('a Database object parses with defaults, or says which field is wrong', () => {
    const good = parseDatabaseObject({ metadata: { name: 'd', namespace: 'n', uid: 'u' }, spec: { cluster: 'c', name: 'shop', owner: 'app' } });
    assert.ok(good.ok && good.value.spec.reclaimPolicy === 'retain' && good.value.spec.ensure === 'present');
    const bad = parseDatabaseObject({ metadata: { name: 'd', namespace: 'n', uid: 'u' }, spec: { cluster: 'c', name: 'template0', owner: 'app' } });
    assert.deepEqual(bad, { ok: false, name: 'd', message: 'spec.name: postgres, template0 and template1 are kept by PostgreSQL and ha-node' });
  });
});
