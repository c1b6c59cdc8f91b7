import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkRequirements, missingPackages, searchPath } from '../../../lib/prerequisites/check.js';
import { decide } from '../../../lib/prerequisites/decide.js';
import { ensurePrerequisites, PrerequisitesMissing } from '../../../lib/prerequisites/ensure.js';
import { requirementsFor } from '../../../lib/prerequisites/requirements.js';

describe("prerequisites: the installer's decision", () => {
  it('does nothing when nothing is missing', () => {
    assert.deepEqual(decide([], { root: false, apt: false }, true), { action: 'ready' });
  });

  it('installs as root on an apt machine, with the packages named', () => {
    assert.deepEqual(decide(['pgbouncer', 'pgbackrest'], { root: true, apt: true }, true), {
      action: 'install',
      packages: ['pgbouncer', 'pgbackrest'],
      command: 'apt-get install -y --no-install-recommends pgbouncer pgbackrest',
    });
  });

  it('refuses without root and gives the exact command with sudo', () => {
    const decision = decide(['pgbouncer', 'nftables'], { root: false, apt: true }, true);
    assert.equal(decision.action, 'refuse');
    assert.equal(decision.action === 'refuse' && decision.command, 'sudo apt-get install -y --no-install-recommends pgbouncer nftables');
  });

  it('refuses on a machine without apt-get, naming the Debian packages', () => {
    const decision = decide(['pgbackrest'], { root: true, apt: false }, true);
    assert.equal(decision.action, 'refuse');
    assert.match(decision.action === 'refuse' ? decision.command : '', /pgbackrest/);
  });

  it('refuses as root when installing was not asked for', () => {
    assert.equal(decide(['pgbouncer'], { root: true, apt: true }, false).action, 'refuse');
  });
});

describe('prerequisites: the check', () => {
  it('finds programs on the search path and names the packages of the missing ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keelson-prereq-'));
    try {
      writeFileSync(join(dir, 'pgbouncer'), '#!/bin/sh\n', { mode: 0o755 });
      writeFileSync(join(dir, 'pgbackrest'), 'not executable\n', { mode: 0o644 });
      const checked = checkRequirements(requirementsFor(['local']), { KEELSON_PREREQUISITES_PATH: dir });
      assert.equal(checked.find((c) => c.requirement.name === 'pgbouncer')?.foundAt, join(dir, 'pgbouncer'));
      assert.equal(checked.find((c) => c.requirement.name === 'pgbackrest')?.foundAt, undefined, 'a file that is not executable is not the program');
      assert.ok(missingPackages(checked).includes('pgbackrest'));
      assert.ok(!missingPackages(checked).includes('pgbouncer'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('looks in the sbin folders a non-root PATH lacks', () => {
    assert.deepEqual(searchPath({ PATH: '/usr/bin:/bin' }), ['/usr/bin', '/bin', '/usr/local/sbin', '/usr/sbin', '/sbin']);
  });

  it('each part asks only for its own requirements', () => {
    const local = requirementsFor(['local']).map((r) => r.debianPackage);
    assert.ok(local.includes('pgbouncer') && local.includes('pgbackrest'));
    assert.ok(!local.includes('nftables') && !local.includes('redis-server'), 'local up on loopback needs no network tools or test servers');
    assert.ok(requirementsFor(['network']).every((r) => ['iproute2', 'util-linux', 'nftables'].includes(r.debianPackage)));
  });

  it('stops with exit code 2 and the command when it may not install, without touching the machine', () => {
    const started = Date.now();
    assert.throws(
      () =>
        ensurePrerequisites(['local'], {
          say: () => assert.fail('nothing to say'),
          host: { root: false, apt: true },
          env: { KEELSON_PREREQUISITES_PATH: '/nonexistent' },
        }),
      (err: unknown) => {
        assert.ok(err instanceof PrerequisitesMissing);
        assert.equal(err.exitCode, 2);
        assert.match(err.message, /sudo apt-get install -y --no-install-recommends pgbackrest pgbouncer/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 2_000);
  });
});
