/**
 * pg_hba.conf as ha-node writes it (Patroni semantics): the rules ha-node itself needs come first,
 * so no user rule can lock out replication, pg_rewind, the exporter or ha-node's own sessions;
 * then the dynamic configuration's db.pg_hba lines, which replace the defaults when given.
 */

export interface HbaInput {
  superuser: string;
  replication: string;
  /** db.pg_hba from the dynamic configuration (already validated); empty: the defaults. */
  userLines: readonly string[];
}

/** Client rules used while db.pg_hba is empty: local sessions trusted, network clients by password. */
export const defaultHbaLines: readonly string[] = [
  'local   all          all                      trust',
  'host    all          all          0.0.0.0/0  scram-sha-256',
  'host    all          all          ::/0       scram-sha-256',
];

/** A role name as one pg_hba token (quoted, so it never reads as a keyword such as "all"). */
function roleToken(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function buildHba(input: HbaInput): string {
  const superuser = roleToken(input.superuser);
  const replication = roleToken(input.replication);
  return [
    '# Written by keelson ha-node; edits are overwritten. Set db.pg_hba in the dynamic configuration instead.',
    '# Rules ha-node needs: its own sessions, pg_rewind and the exporter (superuser), streaming replicas.',
    `local   all          ${superuser}                  trust`,
    `host    all          ${superuser}   0.0.0.0/0  scram-sha-256`,
    `host    all          ${superuser}   ::/0       scram-sha-256`,
    `host    replication  ${replication}  0.0.0.0/0  scram-sha-256`,
    `host    replication  ${replication}  ::/0       scram-sha-256`,
    input.userLines.length > 0 ? '# db.pg_hba:' : '# Defaults (db.pg_hba is empty):',
    ...(input.userLines.length > 0 ? input.userLines : defaultHbaLines),
    '',
  ].join('\n');
}
