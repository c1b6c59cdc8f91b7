import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import pg from 'pg';

/**
 * An application writing over verify-full TLS for the rotation tests: each worker commits one
 * small transaction after another and opens a new connection every `reconnectEvery` commits (a
 * new handshake, so certificates changed since are met), reading the CA file at each connect as
 * libpq reads `sslrootcert`. Every commit and every error (connect included) is recorded, with
 * the fingerprint of the last certificate the server presented.
 */
export interface TlsTarget {
  /** The address dialled. */
  host: string;
  port: number;
  /** The name the certificate must carry (verify-full). */
  servername: string;
  user: string;
  password: string;
  database: string;
  caFile: string;
}

export interface TlsWriterResult {
  commits: number;
  connections: number;
  failures: string[];
  /** sha-256 fingerprint of the certificate the latest connection was served. */
  lastServed?: string;
}

export interface TlsWriter {
  readonly result: TlsWriterResult;
  stop(): Promise<TlsWriterResult>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client over verify-full TLS to the target, connected. */
export async function connectVerified(target: TlsTarget, database = target.database): Promise<pg.Client> {
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database,
    ssl: { ca: readFileSync(target.caFile, 'utf8'), servername: target.servername, rejectUnauthorized: true },
    connectionTimeoutMillis: 10_000,
    query_timeout: 20_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** The certificate the client's server presented (node-postgres keeps the TLS socket as its stream). */
function servedTo(client: pg.Client): string | undefined {
  const stream = (client as unknown as { connection?: { stream?: Partial<TLSSocket> } }).connection?.stream;
  const cert = stream?.getPeerX509Certificate?.();
  return cert instanceof X509Certificate ? cert.fingerprint256 : undefined;
}

export function startTlsWriter(target: TlsTarget, options: { workers: number; reconnectEvery: number; table: string }): TlsWriter {
  const result: TlsWriterResult = { commits: 0, connections: 0, failures: [] };
  let running = true;
  const worker = async () => {
    let client: pg.Client | undefined;
    let onThisConnection = 0;
    while (running) {
      try {
        if (!client) {
          client = await connectVerified(target);
          result.connections += 1;
          result.lastServed = servedTo(client) ?? result.lastServed;
          onThisConnection = 0;
        }
        await client.query(`BEGIN; INSERT INTO ${options.table} DEFAULT VALUES; COMMIT`);
        result.commits += 1;
        onThisConnection += 1;
        if (onThisConnection >= options.reconnectEvery) {
          await client.end().catch(() => undefined);
          client = undefined;
        }
      } catch (error) {
        result.failures.push(`${new Date().toISOString()} ${(error as Error).message}`);
        await client?.end().catch(() => undefined);
        client = undefined;
        await pause(50);
      }
      await pause(10);
    }
    await client?.end().catch(() => undefined);
  };
  const workers = Array.from({ length: options.workers }, () => worker());
  let stopped: Promise<TlsWriterResult> | undefined;
  return {
    result,
    stop() {
      running = false;
      return (stopped ??= Promise.all(workers).then(() => result));
    },
  };
}
