import pg from 'pg';
import { Ports } from '../../lib/ports.js';
import type { OperatorKubeApi } from '../../operator/kube-api.js';
import { names, TlsKeys } from '../../api/naming.js';

/** The demo's application connection: where its pooler is and which role and database it serves. */
export interface DemoApp {
  namespace: string;
  cluster: string;
  owner: string;
  database: string;
}

/** Waits until an application connection through <cluster>-pooler-rw reaches the primary (the printed string works). */
export async function waitPooler(api: OperatorKubeApi, demo: DemoApp, out: (line: string) => void, timeoutMs: number): Promise<void> {
  const { namespace } = demo;
  const { poolerRwService, appSecret } = names(demo.cluster);
  out('  waiting for the pooler');
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const host = (await api.core.readNamespacedService({ namespace, name: poolerRwService })).spec?.clusterIP;
      const secret = await api.core.readNamespacedSecret({ namespace, name: appSecret });
      const password = Buffer.from(secret.data?.password ?? '', 'base64').toString('utf8');
      // As the printed line connects: verify-full by the Service's name against the CA in the app Secret.
      const ca = Buffer.from(secret.data?.[TlsKeys.ca] ?? '', 'base64').toString('utf8');
      const client = new pg.Client({
        host,
        port: Ports.postgres,
        user: demo.owner,
        password,
        database: demo.database,
        ssl: { ca, servername: `${poolerRwService}.${namespace}.svc`, rejectUnauthorized: true },
        connectionTimeoutMillis: 2000,
        query_timeout: 2000,
      });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } finally {
        await client.end().catch(() => undefined);
      }
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(
    `the pooler did not serve within ${Math.round(timeoutMs / 1000)} s${last instanceof Error ? `: ${last.message}` : ''}; logs are under the --dir (node/logs)`,
  );
}
