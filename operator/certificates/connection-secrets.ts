import type { V1Secret } from '@kubernetes/client-node';
import { Ports } from '../../lib/ports.js';
import type { BuildContext } from '../builders/context.js';
import { credentialSecretName } from '../builders/secrets.js';
import { names, SecretKeys, TlsKeys } from '../../api/naming.js';
import type { ReconcileDeps } from '../reconcile/deps.js';

/**
 * The app and superuser Secrets gain what a client needs to verify the server: the server CA
 * bundle (`ca.crt`) and connection strings with sslmode=verify-full to the -rw Service (`host`,
 * `port`, `dbname`, `uri`, `jdbc-uri`). The generated password is never touched; the added keys
 * follow the CA (a CA rotation rewrites `ca.crt`).
 */

export const connectionKeys = { host: 'host', port: 'port', dbname: 'dbname', uri: 'uri', jdbcUri: 'jdbc-uri' } as const;

const decode = (secret: V1Secret, key: string): string | undefined =>
  secret.data?.[key] !== undefined ? Buffer.from(secret.data[key], 'base64').toString('utf8') : undefined;
const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The keys to add for `username`/`password` (pure). */
export function connectionData(ctx: BuildContext, which: 'app' | 'superuser', username: string, password: string, trust: string): Record<string, string> {
  const { name, namespace } = ctx.cluster.metadata;
  const host = `${names(name).rwService}.${namespace}.svc`;
  const dbname = which === 'app' ? ctx.cluster.spec.bootstrap.database : 'postgres';
  const user = encodeURIComponent(username);
  const secret = encodeURIComponent(password);
  return {
    [TlsKeys.ca]: trust,
    [connectionKeys.host]: host,
    [connectionKeys.port]: String(Ports.postgres),
    [connectionKeys.dbname]: dbname,
    [connectionKeys.uri]: `postgresql://${user}:${secret}@${host}:${Ports.postgres}/${encodeURIComponent(dbname)}?sslmode=verify-full`,
    [connectionKeys.jdbcUri]: `jdbc:postgresql://${host}:${Ports.postgres}/${encodeURIComponent(dbname)}?user=${user}&password=${secret}&sslmode=verify-full`,
  };
}

/** Adds or refreshes the keys on both Secrets; a Secret not made yet waits for the next pass. */
export async function syncConnectionSecrets(deps: Pick<ReconcileDeps, 'api' | 'recordWrite'>, ctx: BuildContext, trust: string): Promise<void> {
  for (const which of ['app', 'superuser'] as const) {
    const ref: V1Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: credentialSecretName(ctx, which), namespace: ctx.cluster.metadata.namespace } };
    const stored = await deps.api.read(ref);
    const username = stored && decode(stored, SecretKeys.username);
    const password = stored && decode(stored, SecretKeys.password);
    if (!stored || username === undefined || password === undefined) continue;
    const wanted = connectionData(ctx, which, username, password, trust);
    if (Object.entries(wanted).every(([key, value]) => decode(stored, key) === value)) continue;
    const data = { ...stored.data, ...Object.fromEntries(Object.entries(wanted).map(([key, value]) => [key, encode(value)])) };
    deps.recordWrite('Secret', 'update');
    // The read's resourceVersion: a concurrent writer makes this replace fail and the next pass try again.
    await deps.api.replace({ ...stored, data });
  }
}
