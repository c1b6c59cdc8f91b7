import { ContainerNames, Labels, RoleNames } from '../../api/naming.js';

/** The kubectl command lines `kubectl keelson psql` and `logs` hand over to kubectl (pure, so tests read them). */

export interface KubectlTarget {
  namespace: string;
  kubeconfig?: string;
  context?: string;
}

function common(target: KubectlTarget): string[] {
  return [
    ...(target.kubeconfig ? ['--kubeconfig', target.kubeconfig] : []),
    ...(target.context ? ['--context', target.context] : []),
    '--namespace',
    target.namespace,
  ];
}

/** psql inside the member's postgres container, as the superuser over the local socket (no password needed there). */
export function psqlArgs(target: KubectlTarget, pod: string, psqlOptions: string[], interactive: boolean): string[] {
  return [
    ...common(target),
    'exec',
    ...(interactive ? ['-it'] : ['-i']),
    pod,
    '-c',
    ContainerNames.postgres,
    '--',
    'psql',
    '-U',
    RoleNames.superuser,
    ...psqlOptions,
  ];
}

export interface LogsOptions {
  follow?: boolean;
  tail?: string;
  since?: string;
  pod?: string;
}

/**
 * ha-node runs PostgreSQL in the postgres container and logs there (JSON lines, pino); one pod or
 * every pod of the cluster, each line prefixed with its pod.
 */
export function logsArgs(target: KubectlTarget, cluster: string, options: LogsOptions): string[] {
  const which = options.pod ? [options.pod] : ['-l', `${Labels.cluster}=${cluster}`, '--max-log-requests', '10'];
  return [
    ...common(target),
    'logs',
    ...which,
    '-c',
    ContainerNames.postgres,
    '--prefix',
    ...(options.follow ? ['--follow'] : []),
    ...(options.tail ? ['--tail', options.tail] : []),
    ...(options.since ? ['--since', options.since] : []),
  ];
}
