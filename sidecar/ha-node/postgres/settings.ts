/** What a PostgresInstance is configured with: its folders, addresses, credentials, local parameters. */
import type { ParameterValue } from './conf.js';
import type { PeerTlsSettings } from './peer-tls.js';
import type { RunAs } from './runner.js';
import type { StandbySource } from './standby-source.js';

export interface Credentials {
  username: string;
  password: string;
}

export interface PostgresSettings {
  name: string;
  scope: string;
  dataDir: string;
  binDir: string;
  listenAddress: string;
  /** Address other members use to reach this server. */
  connectHost: string;
  port: number;
  socketDir: string;
  /** pg_wal's folder on a WAL volume of its own: linked before every start (disk/wal-volume.ts). */
  walDir?: string;
  superuser: Credentials;
  replication: Credentials;
  runAs?: RunAs;
  /** Local parameters (lowest precedence below the dynamic configuration's). */
  parameters: Record<string, ParameterValue>;
  /** TLS to the other members (replication, pg_basebackup, pg_rewind); plain connections when unset. */
  peerTls?: PeerTlsSettings;
}

export interface LeaderAddress {
  name: string;
  host: string;
  port: number;
  /** Set when this is the remote source of a standby cluster (the standby leader follows it). */
  source?: StandbySource;
}
