import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildServerConf, connInfo, slotNameFor, type ParameterValue } from './conf.js';
import { sslOn } from '../../../api/postgres/pg-hba.js';
import { buildHba } from './hba.js';
import { peerConnectionTls } from './peer-tls.js';
import type { LeaderAddress, PostgresSettings } from './settings.js';
import { writePrivateFile, type RunAs } from './runner.js';
import { standbySourceSettings } from './standby-source.js';

/** What the files depend on besides the static settings: the layers of parameters, hba lines and the role. */
export interface ConfigInput {
  /** Local, dynamic and enforced parameters, later layers winning. */
  parameters: Record<string, ParameterValue>[];
  hbaLines: readonly string[];
  leader: LeaderAddress | undefined;
  asReplica: boolean;
  /** synchronous_standby_names as a primary (a replica writes none). */
  syncStandbyNames: string;
}

/** postgresql.conf for the role: a replica streams from the leader (or its remote source) on a slot; a primary names its sync standbys. */
/** The parameters the server runs with, later layers winning. */
function mergedParameters(input: ConfigInput): Record<string, ParameterValue> {
  return Object.assign({}, ...input.parameters) as Record<string, ParameterValue>;
}

export function renderServerConf(settings: PostgresSettings, input: ConfigInput): string {
  const { leader, asReplica } = input;
  const source = leader?.source;
  const streamsFrom = leader && (!source || source.host !== undefined) ? leader : undefined;
  const standby = asReplica
    ? {
        primaryConninfo: streamsFrom
          ? connInfo({
              host: streamsFrom.host,
              port: streamsFrom.port,
              user: settings.replication.username,
              password: settings.replication.password,
              applicationName: settings.name,
              tls: peerConnectionTls(settings.peerTls, streamsFrom),
            })
          : undefined,
        // The remote source's slot is the one its owner created for this cluster; ours are per member.
        slotName: source ? source.primary_slot_name : leader ? slotNameFor(settings.name) : undefined,
        settings: source ? standbySourceSettings(source) : undefined,
      }
    : undefined;
  return buildServerConf({
    listenAddress: settings.listenAddress,
    port: settings.port,
    socketDir: settings.socketDir,
    clusterName: settings.scope,
    parameters: { ...mergedParameters(input), synchronous_standby_names: asReplica ? '' : input.syncStandbyNames },
    standby,
  });
}

/** Writes postgresql.conf, pg_hba.conf, an empty postgresql.auto.conf and the standby signal for the role. */
export function writeConfigFiles(settings: PostgresSettings, runAs: RunAs | undefined, input: ConfigInput): void {
  const dataDir = settings.dataDir;
  writePrivateFile(join(dataDir, 'postgresql.conf'), renderServerConf(settings, input), runAs);
  writePrivateFile(
    join(dataDir, 'pg_hba.conf'),
    buildHba({
      superuser: settings.superuser.username,
      replication: settings.replication.username,
      userLines: input.hbaLines,
      // TLS is required exactly when the server serves it: hostssl rules on a server without ssl would lock the members out.
      tls: sslOn(mergedParameters(input)),
      replicationCertificate: settings.peerTls?.cert !== undefined,
    }),
    runAs,
  );
  // pg_basebackup and pg_rewind copy the source's auto.conf; ha-node owns every setting itself.
  writePrivateFile(join(dataDir, 'postgresql.auto.conf'), '', runAs);
  const signal = join(dataDir, 'standby.signal');
  if (input.asReplica) writePrivateFile(signal, '', runAs);
  else removeStandbySignal(dataDir);
}

export function removeStandbySignal(dataDir: string): void {
  const signal = join(dataDir, 'standby.signal');
  if (existsSync(signal)) unlinkSync(signal);
}

/**
 * The settings of the postgresql.conf ha-node last wrote, as text (renderValue's quoting undone):
 * a member that starts with a refused value in the DCS keeps the value it ran with.
 */
export function writtenParameters(dataDir: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(dataDir, 'postgresql.conf'), 'utf8');
  } catch {
    return {};
  }
  const written: Record<string, string> = {};
  for (const match of text.matchAll(/^([A-Za-z_][A-Za-z0-9_.]*) = (.*)$/gm)) {
    const raw = match[2]!;
    written[match[1]!] = /^'.*'$/.test(raw) ? raw.slice(1, -1).replace(/''|\\\\/g, (pair) => pair[0]!) : raw;
  }
  return written;
}

/** synchronous_standby_names as last written to postgresql.conf ('' when none or unreadable). */
export function writtenSyncStandbyNames(dataDir: string): string {
  try {
    const text = readFileSync(join(dataDir, 'postgresql.conf'), 'utf8');
    const match = /^synchronous_standby_names = '((?:[^']|'')*)'$/m.exec(text);
    return match ? match[1]!.replace(/''/g, "'") : '';
  } catch {
    return '';
  }
}
