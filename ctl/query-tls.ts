import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { apiStatusCode, describeApiError, loadKubeConfig } from '../lib/kube/client.js';
import { names, TlsKeys } from '../api/naming.js';
import { UsageError } from './context.js';
import { UnreachableError } from './client.js';
import type { TargetOptions } from './discovery.js';

/**
 * TLS of `query`, as libpq does it for psql: --sslmode/--sslrootcert, else PGSSLMODE/PGSSLROOTCERT.
 * A cluster found through its Leases brings its own CA (the `ca.crt` of `<cluster>-server-tls`),
 * and then verify-full is the default. verify-full checks the member's certificate against its
 * name under the headless Service (`<member>.<cluster>-headless.<namespace>.svc`, which the
 * operator's server certificate covers) while the member's address is dialled, so no DNS is needed.
 */

export const sslModes = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof sslModes)[number];

export interface QueryTlsOptions {
  sslmode?: string;
  sslrootcert?: string;
}

/** The cluster's server CA bundle from its Secret; undefined when there is none (a cluster the operator does not run). */
export async function serverCaFromClusterSecret(target: TargetOptions): Promise<string | undefined> {
  if (target.urls.length > 0 || !target.scope) return undefined;
  try {
    const api = loadKubeConfig({ kubeconfig: target.kubeconfig }).makeApiClient(k8s.CoreV1Api);
    const secret = await api.readNamespacedSecret({ name: names(target.scope).serverTlsSecret, namespace: target.namespace });
    const value = secret.data?.[TlsKeys.ca];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  } catch (error) {
    if (apiStatusCode(error) === 404) return undefined;
    throw new UnreachableError(`cannot read the cluster's CA (Secret ${names(target.scope).serverTlsSecret}): ${describeApiError(error)}`);
  }
}

function modeOf(value: string | undefined, from: string): SslMode | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(sslModes as readonly string[]).includes(value)) throw new UsageError(`${from} must be one of ${sslModes.join(', ')}, not "${value.slice(0, 32)}"`);
  return value as SslMode;
}

/**
 * node-postgres's `ssl` for a session with `member` of cluster `scope`; undefined leaves TLS to
 * node-postgres's reading of PGSSLMODE (no mode and no CA given: as before).
 */
export async function queryTls(
  options: QueryTlsOptions,
  env: NodeJS.ProcessEnv,
  target: TargetOptions,
  member: { name: string; scope: string },
): Promise<ConnectionOptions | false | undefined> {
  const rootCertFile = options.sslrootcert ?? env.PGSSLROOTCERT;
  let ca: string | undefined;
  if (rootCertFile) {
    try {
      ca = readFileSync(rootCertFile, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --sslrootcert ${rootCertFile}: ${(error as Error).message}`);
    }
  } else ca = await serverCaFromClusterSecret(target);
  const mode = modeOf(options.sslmode, '--sslmode') ?? modeOf(env.PGSSLMODE, 'PGSSLMODE') ?? (ca ? 'verify-full' : undefined);
  if (mode === undefined) return undefined;
  if (mode === 'disable') return false;
  if (mode === 'require') return { rejectUnauthorized: false };
  if (!ca) throw new UsageError(`--sslmode ${mode} needs the CA: give --sslrootcert (or PGSSLROOTCERT), or name the cluster so its Secret is read`);
  const servername = `${member.name}.${names(member.scope).headlessService}.${target.namespace}.svc`;
  return { rejectUnauthorized: true, ca, servername, ...(mode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}) };
}
