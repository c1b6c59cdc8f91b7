/**
 * pg_hba.conf as ha-node writes it (Patroni semantics): the rules ha-node itself needs come first,
 * so no user rule can lock out replication, pg_rewind, the exporter or ha-node's own sessions;
 * then the dynamic configuration's db.pg_hba lines, which replace the defaults when given.
 *
 * With TLS (the server runs with ssl on, as every cluster the operator makes does) every remote
 * session must use it: ha-node's rules are hostssl, `hostnossl … reject` for every address follows
 * them, and only then come the user's lines (CloudNativePG's order: fixed rules, then the user's),
 * so a user's `host` line can only match a TLS session. Replication then takes the replication
 * client certificate alone (`cert`) when the members have one. Without TLS (no certificates configured,
 * or ssl turned off) hostssl rules could never match and would lock the members out of each
 * other: the rules stay those of a plaintext server, by password.
 */

export interface HbaInput {
  superuser: string;
  replication: string;
  /** db.pg_hba from the dynamic configuration (already validated); empty: the defaults. */
  userLines: readonly string[];
  /** The server runs with ssl on: remote sessions must use TLS. */
  tls?: boolean;
  /**
   * With tls: the members present the replication client certificate, so replication takes that
   * certificate alone (`cert`: signed by the client CA, common name = the role), as CloudNativePG does.
   */
  replicationCertificate?: boolean;
}

/** Client rules used while db.pg_hba is empty: local sessions trusted, network clients by password. */
export const defaultHbaLines: readonly string[] = [
  'local   all          all                      trust',
  'host    all          all          0.0.0.0/0  scram-sha-256',
  'host    all          all          ::/0       scram-sha-256',
];

/** The same with TLS: network clients by password, over TLS only. */
export const defaultTlsHbaLines: readonly string[] = [
  'local   all          all                      trust',
  'hostssl all          all          0.0.0.0/0  scram-sha-256',
  'hostssl all          all          ::/0       scram-sha-256',
];

/** A role name as one pg_hba token (quoted, so it never reads as a keyword such as "all"). */
function roleToken(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function buildHba(input: HbaInput): string {
  const superuser = roleToken(input.superuser);
  const replication = roleToken(input.replication);
  const remote = input.tls ? 'hostssl' : 'host   ';
  const replicationMethod = input.tls && input.replicationCertificate ? 'cert' : 'scram-sha-256';
  return [
    '# Written by keelson ha-node; edits are overwritten. Set db.pg_hba in the dynamic configuration instead.',
    '# Rules ha-node needs: its own sessions, pg_rewind and the exporter (superuser), streaming replicas.',
    `local   all          ${superuser}                  trust`,
    `${remote} all          ${superuser}   0.0.0.0/0  scram-sha-256`,
    `${remote} all          ${superuser}   ::/0       scram-sha-256`,
    `${remote} replication  ${replication}  0.0.0.0/0  ${replicationMethod}`,
    `${remote} replication  ${replication}  ::/0       ${replicationMethod}`,
    ...(input.tls
      ? [
          '# Every remote session uses TLS: the rules below only ever see TLS sessions.',
          'hostnossl all          all          0.0.0.0/0  reject',
          'hostnossl all          all          ::/0       reject',
          'hostnossl replication  all          0.0.0.0/0  reject',
          'hostnossl replication  all          ::/0       reject',
        ]
      : []),
    input.userLines.length > 0 ? '# db.pg_hba:' : '# Defaults (db.pg_hba is empty):',
    ...(input.userLines.length > 0 ? input.userLines : input.tls ? defaultTlsHbaLines : defaultHbaLines),
    '',
  ].join('\n');
}
