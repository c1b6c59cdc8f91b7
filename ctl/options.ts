import { Option, type Command } from 'commander';

/**
 * The options every `keelson ctl` subcommand shares, declared once: commander registers them on
 * the ctl command from this list, and run.ts reads the parsed values as CtlFlags.
 */
export interface CtlFlags {
  cluster?: string;
  /** The cluster named as a command's positional argument (patronictl's `list demo`). */
  clusterArgument?: string;
  namespace?: string;
  kubeconfig?: string;
  url?: string[];
  output?: string;
  username?: string;
  password?: string;
  token?: string;
  requestTimeout?: string;
  cacert?: string;
  insecure?: boolean;
}

/** Collects a repeatable option's values (--url a --url b, --set k=v ...). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function addGlobalOptions(command: Command): Command {
  return command
    .option('-c, --cluster <name>', 'cluster name (env KEELSON_CLUSTER)')
    .option('-n, --namespace <ns>', 'namespace of the cluster (env POD_NAMESPACE, default "default")')
    .option('--kubeconfig <path>', 'kubeconfig file (else KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--url <url>', 'member REST API URL instead of the Kubernetes lookup (repeatable; env KEELSON_CTL_URL, comma-separated)', collect)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']))
    .option('--username <name>', 'API user for basic auth (env KEELSON_API_USERNAME)')
    .option('--password <password>', 'API password (env KEELSON_API_PASSWORD)')
    .option('--token <token>', 'API bearer token (env KEELSON_API_TOKEN)')
    .option('--cacert <file>', 'CA bundle (PEM) to trust for https member URLs (env KEELSON_API_CACERT)')
    .option('--insecure', 'do not verify https certificates (testing only)')
    .option('--request-timeout <seconds>', 'timeout of one API request', '10');
}
