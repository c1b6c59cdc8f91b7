import assert from 'node:assert/strict';
import { chownSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hbaLineProblem, hbaProblems } from '../../../api/postgres/pg-hba.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';

/**
 * The pg_hba line checks against PostgreSQL itself: each line is written into a real server's
 * pg_hba.conf and pg_hba_file_rules (which parses the file as a reload would) must agree with
 * our verdict. Lines we refuse on purpose although PostgreSQL would take them are listed apart.
 */
const accepted = [
  'host all all 0.0.0.0/0 scram-sha-256',
  'host "my db" "my user" 10.1.2.3 255.255.255.0 trust',
  'local all all peer',
  'local all all ident',
  'host all all samenet reject',
  'host all all .example.com password',
  'host all +admins 127.0.0.1/32 scram-sha-256 # trailing comment',
  'host replication all 192.168.0.0/16 ldap ldapserver=ldap.example.com ldapprefix="cn=" ldapsuffix=",dc=example"',
  '# only a comment',
  '',
];
const refused = [
  'hots all all 0.0.0.0/0 trust',
  'host all all 10.0.0.0/33 md5',
  'host all all 10.0.0.1 md5',
  'host all all 0.0.0.0/0 magic',
  'host all all 0.0.0.0/0 peer',
  'host all all 0.0.0.0/0 cert',
  'local all',
  'host all all',
  'host all all 0.0.0.0/0',
  'host all all 10.0.0.0 ffff:: md5',
  'host all all 0.0.0.0/0 md5 notanoption',
  'host "all all 0.0.0.0/0 md5',
  'hostssl app app ::/0 md5',
];
/** PostgreSQL reads these but ha-node refuses them: they pull in other files. */
const refusedByPolicy = ['host @dbs all 0.0.0.0/0 md5', 'include other.conf'];

describe('pg_hba line checks', () => {
  let server: TestPostgres;
  let hbaFile: string;
  let original: string;

  before(async () => {
    server = await startPostgres();
    hbaFile = join(server.dataDir, 'pg_hba.conf');
    original = readFileSync(hbaFile, 'utf8');
  });

  after(async () => {
    await server?.stop();
  });

  /** PostgreSQL's verdict on one line (placed after the file's own rules), read back from pg_hba_file_rules. */
  async function postgresVerdict(line: string): Promise<string | undefined> {
    writeFileSync(hbaFile, `${original}\n${line}\n`);
    if (server.runAs) chownSync(hbaFile, server.runAs.uid, server.runAs.gid);
    const { rows } = await server.query<{ error: string | null }>('SELECT error FROM pg_hba_file_rules WHERE error IS NOT NULL');
    return rows[0]?.error ?? undefined;
  }

  it('accepts what PostgreSQL accepts', async () => {
    for (const line of accepted) {
      assert.equal(await postgresVerdict(line), undefined, `PostgreSQL refuses ${line}`);
      assert.equal(hbaLineProblem(line), undefined, line);
    }
  });

  it('refuses what PostgreSQL refuses, with a message', async () => {
    for (const line of refused) {
      assert.ok(await postgresVerdict(line), `PostgreSQL accepts ${line}`);
      assert.ok(hbaLineProblem(line), `accepted: ${line}`);
    }
  });

  it('takes hostssl rules only when the server runs with ssl = on', () => {
    for (const line of ['hostssl app app ::/0 md5', 'hostssl all all 0.0.0.0/0 cert clientcert=verify-full']) {
      assert.match(hbaLineProblem(line) ?? '', /ssl = on/);
      assert.equal(hbaLineProblem(line, { ssl: true }), undefined, line);
    }
    assert.match(hbaLineProblem('host all all 0.0.0.0/0 cert', { ssl: true }) ?? '', /only hostssl/);
  });

  it('refuses file inclusion and multi-line values, and names the line', () => {
    for (const line of [...refusedByPolicy, 'host all all 0.0.0.0/0 trust\nhost all all ::/0 trust']) assert.ok(hbaLineProblem(line), line);
    const problems = hbaProblems(['host all all 0.0.0.0/0 md5', 'host all all 10.0.0.0/33 md5']);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^line 2 "host all all 10\.0\.0\.0\/33 md5" has an invalid CIDR mask length/);
  });
});
