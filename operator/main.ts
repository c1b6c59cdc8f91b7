import { packageVersion } from '../lib/cli/version.js';
import { createLogger } from '../lib/log.js';
import { parseListenAddress } from '../lib/ports.js';
import { defaultLeaderTimings, type LeaderTimings } from './leader-election.js';
import { runOperator } from './run.js';

/** Parses WATCH_NAMESPACE / --watch-namespace: "a,b" → two namespaces; empty or "*" → all. */
export function parseWatchNamespaces(value: string | undefined): string[] {
  if (!value || value.trim() === '' || value.trim() === '*') return [];
  return value
    .split(',')
    .map((ns) => ns.trim())
    .filter((ns) => ns.length > 0);
}

/** The Lease timings from the --leader-election-* flags (seconds); throws naming the bad flag. */
export function parseLeaderTimings(flags: Record<string, string | boolean | undefined>): LeaderTimings {
  const seconds = (flag: string, key: string, fallback: number): number => {
    const raw = flags[key];
    const value = raw === undefined ? fallback : Number(raw);
    if (typeof raw === 'boolean' || !Number.isFinite(value) || value <= 0) throw new Error(`--${flag} must be a positive number of seconds`);
    return value * 1000;
  };
  const timings = {
    leaseDurationMs: seconds('leader-election-lease-duration', 'leaderElectionLeaseDuration', defaultLeaderTimings.leaseDurationMs / 1000),
    renewDeadlineMs: seconds('leader-election-renew-deadline', 'leaderElectionRenewDeadline', defaultLeaderTimings.renewDeadlineMs / 1000),
    retryPeriodMs: seconds('leader-election-retry-period', 'leaderElectionRetryPeriod', defaultLeaderTimings.retryPeriodMs / 1000),
  };
  // client-go's rules: a leader gives up before a standby may take over, and retries within the deadline.
  if (timings.renewDeadlineMs >= timings.leaseDurationMs)
    throw new Error('--leader-election-renew-deadline must be shorter than --leader-election-lease-duration');
  if (timings.retryPeriodMs >= timings.renewDeadlineMs) throw new Error('--leader-election-retry-period must be shorter than --leader-election-renew-deadline');
  return timings;
}

export async function startOperatorFromFlags(flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger({ name: 'operator' });
  const relistSeconds = Number(flags.relistInterval ?? 300);
  if (!Number.isFinite(relistSeconds) || relistSeconds < 1) throw new Error('--relist-interval must be a number of seconds >= 1');
  const leaderTimings = parseLeaderTimings(flags);
  const caTrustSeconds = Number(flags.caTrustPropagation ?? 180);
  if (typeof flags.caTrustPropagation === 'boolean' || !Number.isFinite(caTrustSeconds) || caTrustSeconds < 0)
    throw new Error('--ca-trust-propagation must be a number of seconds >= 0');
  const operator = await runOperator({
    kubeconfig: typeof flags.kubeconfig === 'string' ? flags.kubeconfig : undefined,
    namespaces: parseWatchNamespaces(typeof flags.watchNamespace === 'string' ? flags.watchNamespace : env.WATCH_NAMESPACE),
    leaderElect: flags.leaderElect !== false,
    leaseNamespace: typeof flags.leaderElectionNamespace === 'string' ? flags.leaderElectionNamespace : (env.POD_NAMESPACE ?? 'default'),
    leaseName: typeof flags.leaderElectionName === 'string' ? flags.leaderElectionName : 'keelson-operator',
    identity: env.POD_NAME,
    leaderTimings,
    health: parseListenAddress(String(flags.healthAddress)),
    metrics: parseListenAddress(String(flags.metricsAddress)),
    relistIntervalMs: relistSeconds * 1000,
    caTrustPropagationMs: caTrustSeconds * 1000,
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
