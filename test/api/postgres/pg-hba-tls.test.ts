import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hbaProblems } from '../../../api/postgres/pg-hba.js';
import { databaseClusterSpecSchema } from '../../../api/crd/types.js';

/**
 * User pg_hba lines against the TLS rules (api/postgres/pg-hba-tls.ts): what would let a remote
 * client in without TLS, or without authentication, is refused with a message naming the line;
 * what only narrows access, or is local, is taken. The spec refuses them while TLS is on (always,
 * unless postgresql.parameters turns ssl off).
 */
const requireTls = { ssl: true, requireTls: true };

describe('pg_hba lines against the TLS rules', () => {
  it('refuses lines that would let a remote client in without TLS or without authentication, naming the line', () => {
    const cases: [string, RegExp][] = [
      ['hostnossl all all 0.0.0.0/0 scram-sha-256', /would let a remote client in without TLS/],
      ['hostnossl app app 10.0.0.0/8 md5', /would let a remote client in without TLS/],
      ['hostgssenc all all 0.0.0.0/0 gss', /GSSAPI encryption is not TLS/],
      ['host all all 0.0.0.0/0 trust', /trusts a remote address without authentication/],
      ['hostssl all all 10.1.2.3 255.255.255.255 trust', /trusts a remote address/],
      ['host replication all samenet trust', /trusts a remote address/],
    ];
    for (const [line, message] of cases) {
      const problems = hbaProblems(['local all all trust', line], requireTls);
      assert.equal(problems.length, 1, line);
      assert.ok(problems[0]!.startsWith(`line 2 ${JSON.stringify(line)} `), problems[0]);
      assert.match(problems[0]!, message);
    }
  });

  it('takes lines that only narrow access, and local ones', () => {
    const lines = [
      'local all all trust',
      'local all all peer',
      'host all all 0.0.0.0/0 scram-sha-256',
      'hostssl all all ::/0 scram-sha-256',
      'hostssl all all 0.0.0.0/0 cert',
      'hostnossl all all 0.0.0.0/0 reject',
      'host all all 10.0.0.0/8 reject',
      'hostnogssenc all all 0.0.0.0/0 md5',
    ];
    assert.deepEqual(hbaProblems(lines, requireTls), []);
    assert.deepEqual(hbaProblems(['host all all 0.0.0.0/0 trust', 'hostnossl all all 0.0.0.0/0 md5'], { ssl: false }), [], 'no TLS: no TLS rules');
  });

  it('the spec refuses them unless ssl is turned off', () => {
    const parse = (postgresql: Record<string, unknown>) => databaseClusterSpecSchema.safeParse({ postgresql });
    const refused = parse({ pg_hba: ['hostnossl all all 0.0.0.0/0 md5'] });
    assert.equal(refused.success, false);
    assert.match(
      refused.error!.issues.map((i) => i.message).join('\n'),
      /line 1 "hostnossl all all 0\.0\.0\.0\/0 md5" would let a remote client in without TLS/,
    );
    assert.equal(parse({ pg_hba: ['host all all 0.0.0.0/0 trust'] }).success, false);
    assert.equal(parse({ pg_hba: ['host all all 0.0.0.0/0 scram-sha-256'] }).success, true);
    assert.equal(parse({ parameters: { ssl: 'off' }, pg_hba: ['hostnossl all all 0.0.0.0/0 md5'] }).success, true);
  });
});
