import type { ConnectionOptions } from 'node:tls';
import type { CoreV1Api } from '@kubernetes/client-node';
import pg from 'pg';
import { names, podSelector, selectorString, TlsKeys } from '../../api/naming.js';
import { Ports } from '../../lib/ports.js';

/**
 * How the tests' clients reach a cluster's PostgreSQL and PgBouncer: over TLS, verified as libpq's
 * sslmode=verify-full does, against the CA in `<cluster>-server-tls` (what a client finds in the
 * app Secret's ca.crt), by the name the server certificate carries while the address is dialled:
 * `<service>.<namespace>.svc` for a Service, `<pod>.<cluster>-headless.<namespace>.svc` for a pod.
 * Every remote session needs TLS (pg_hba's hostnossl rejects).
 */

/** The cluster's server CA bundle (PEM). */
export async function clusterCa(api: { core: CoreV1Api }, namespace: string, cluster: string): Promise<string> {
  const secret = await api.core.readNamespacedSecret({ namespace, name: names(cluster).serverTlsSecret });
  const ca = secret.data?.[TlsKeys.ca];
  if (!ca) throw new Error(`${names(cluster).serverTlsSecret} has no ${TlsKeys.ca} yet`);
  return Buffer.from(ca, 'base64').toString('utf8');
}

/** node-postgres `ssl` for verify-full: the certificate must chain to `ca` and name `serverName`. */
export function verifyFull(ca: string, serverName: string): ConnectionOptions {
  return { ca, servername: serverName, rejectUnauthorized: true };
}

/**
 * A superuser client (not yet connected) of the PostgreSQL at `host`, in the postgres database,
 * over `ssl`; its connection errors are left to whoever awaits connect() and query().
 */
export function superuserClient(host: string, password: string, ssl: ConnectionOptions, timeouts: { connectMs: number; queryMs: number }): pg.Client {
  const client = new pg.Client({
    host,
    port: Ports.postgres,
    user: 'postgres',
    password,
    database: 'postgres',
    ssl,
    connectionTimeoutMillis: timeouts.connectMs,
    query_timeout: timeouts.queryMs,
  });
  client.on('error', () => undefined);
  return client;
}

/** The name a Service's certificate entry carries. */
export function serviceName(namespace: string, service: string): string {
  return `${service}.${namespace}.svc`;
}

/** The name a member's certificate entry carries (under the headless Service). */
export function podName(namespace: string, cluster: string, pod: string): string {
  return `${pod}.${names(cluster).headlessService}.${namespace}.svc`;
}

/** The name the certificate behind `host` carries: the member's (a pod address) or the Service's (a cluster IP). */
export async function serverNameOf(api: { core: CoreV1Api }, namespace: string, cluster: string, host: string): Promise<string> {
  const pods = (await api.core.listNamespacedPod({ namespace, labelSelector: selectorString(podSelector(cluster)) })).items;
  const pod = pods.find((p) => p.status?.podIP === host && !p.metadata?.deletionTimestamp)?.metadata?.name;
  if (pod) return podName(namespace, cluster, pod);
  const service = (await api.core.listNamespacedService({ namespace })).items.find((s) => s.spec?.clusterIP === host)?.metadata?.name;
  if (service) return serviceName(namespace, service);
  throw new Error(`${host} is neither a member nor a Service of ${cluster}: no name to check its certificate against`);
}

/** node-postgres `ssl` verifying whatever `host` is of the cluster (serverNameOf), with the cluster CA. */
export async function verifyFullTo(api: { core: CoreV1Api }, namespace: string, cluster: string, host: string): Promise<ConnectionOptions> {
  return verifyFull(await clusterCa(api, namespace, cluster), await serverNameOf(api, namespace, cluster, host));
}
