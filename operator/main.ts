import { packageVersion } from '../lib/cli/version.js';
import { createLogger } from '../lib/log.js';
import { parseListenAddress } from '../lib/ports.js';
import { runOperator } from './run.js';

/** Parses WATCH_NAMESPACE / --watch-namespace: "a,b" → two namespaces; empty or "*" → all. */
export function parseWatchNamespaces(value: string | undefined): string[] {
  if (!value || value.trim() === '' || value.trim() === '*') return [];
  return value.split(',').map((ns) => ns.trim()).filter((ns) => ns.length > 0);
}

export async function startOperatorFromFlags(flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger({ name: 'operator' });
  const relistSeconds = Number(flags.relistInterval ?? 300);
  if (!Number.isFinite(relistSeconds) || relistSeconds < 1) throw new Error('--relist-interval must be a number of seconds >= 1');
  const operator = await runOperator({
    kubeconfig: typeof flags.kubeconfig === 'string' ? flags.kubeconfig : undefined,
    namespaces: parseWatchNamespaces(typeof flags.watchNamespace === 'string' ? flags.watchNamespace : env.WATCH_NAMESPACE),
    leaderElect: flags.leaderElect !== false,
    leaseNamespace: typeof flags.leaderElectionNamespace === 'string' ? flags.leaderElectionNamespace : env.POD_NAMESPACE ?? 'default',
    leaseName: typeof flags.leaderElectionName === 'string' ? flags.leaderElectionName : 'keelson-operator',
    identity: env.POD_NAME,
    health: parseListenAddress(String(flags.healthAddress)),
    metrics: parseListenAddress(String(flags.metricsAddress)),
    relistIntervalMs: relistSeconds * 1000,
    operatorVersion: packageVersion(),
    logger,
    onLostLeadership: () => {
      logger.error('leadership lost; exiting so a fresh process can compete again');
      process.exit(1);
    },
  });
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    void operator.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
