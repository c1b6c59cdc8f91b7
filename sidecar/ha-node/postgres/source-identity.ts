/**
 * The database system identifier of a streaming source, read the way the standby will connect to
 * it: a physical replication connection (libpq through psql, so TLS and pg_hba's `replication`
 * lines apply as they do to the walreceiver) running IDENTIFY_SYSTEM.
 */
import { quoteConnValue, tlsConnParts } from './conf.js';
import type { PostgresInstance } from './instance.js';
import { peerConnectionTls } from './peer-tls.js';
import { runTool } from './runner.js';

export interface StreamingAddress {
  host: string;
  port: number;
  /** The name the source's certificate carries (standby_cluster.server_name): reached as the walreceiver reaches it (peer-tls.ts). */
  server_name?: string;
}

/** The first column of IDENTIFY_SYSTEM's one row (`-At` prints `systemid|timeline|xlogpos|dbname`); pure. */
export function parseIdentifySystem(output: string): string | undefined {
  const row = output.split('\n').find((line) => /^\d+\|/.test(line.trim()));
  return row?.trim().split('|')[0];
}

/**
 * The source's system identifier, or the reason it could not be read (unreachable, refused,
 * unexpected answer). The password goes through the environment, never the command line.
 */
export async function streamingSourceSystem(pg: PostgresInstance, address: StreamingAddress): Promise<{ systemIdentifier: string } | { error: string }> {
  const { replication, name } = pg.settings;
  const tls = peerConnectionTls(pg.settings.peerTls, { name: 'standby_cluster', source: address });
  const conninfo = [
    ...(tls ? tlsConnParts(address.host, tls) : [`host=${quoteConnValue(address.host)}`]),
    `port=${address.port}`,
    `user=${quoteConnValue(replication.username)}`,
    `application_name=${quoteConnValue(name)}`,
    'replication=true',
    'connect_timeout=5',
  ].join(' ');
  try {
    const result = await runTool(pg.tool('psql'), ['-X', '-At', '-d', conninfo, '-c', 'IDENTIFY_SYSTEM'], {
      runAs: pg.runAs,
      activity: pg.activity,
      env: { PGPASSWORD: replication.password, PGCONNECT_TIMEOUT: '5' },
      timeoutMs: 30_000,
    });
    const systemIdentifier = result.code === 0 ? parseIdentifySystem(result.output) : undefined;
    if (systemIdentifier) return { systemIdentifier };
    return { error: result.output.split('\n').slice(-2).join(' ').trim() || `psql exited with ${result.code}` };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
