import { Command } from 'commander';
import { failAndExit } from '../lib/cli/exit.js';
import { Ports } from '../lib/ports.js';

export function createOperatorCommand(): Command {
  return new Command('operator')
    .description('reconcile DatabaseCluster objects into Kubernetes resources')
    .option('--kubeconfig <path>', 'kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--watch-namespace <list>', 'comma-separated namespaces to watch; empty = all (env WATCH_NAMESPACE)')
    .option('--no-leader-elect', 'run without leader election (single replica only)')
    .option('--leader-election-namespace <ns>', 'namespace of the leader Lease (env POD_NAMESPACE, default "default")')
    .option('--leader-election-name <name>', 'name of the leader Lease', 'keelson-operator')
    .option('--leader-election-lease-duration <seconds>', 'how long a standby waits on an unrenewed Lease before taking over', '15')
    .option('--leader-election-renew-deadline <seconds>', 'how long the leader tries to renew before it gives up leading (and exits)', '10')
    .option('--leader-election-retry-period <seconds>', 'time between acquire/renew attempts', '2')
    .option('--health-address <addr>', 'listen address of /healthz and /readyz', `:${Ports.operatorHealth}`)
    .option('--metrics-address <addr>', 'listen address of /metrics', `:${Ports.operatorMetrics}`)
    .option('--relist-interval <seconds>', 'full relist period of every watch', '300')
    .option(
      '--ca-trust-propagation <seconds>',
      "how long a new CA is only trusted before it signs: time for every kubelet to refresh mounted Secrets (its --sync-frequency plus the cache's TTL)",
      '180',
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      try {
        const { startOperatorFromFlags } = await import('./main.js');
        await startOperatorFromFlags(flags);
      } catch (err) {
        failAndExit(err);
      }
    });
}
