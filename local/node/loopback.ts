/**
 * Containers of a pod share a network namespace, so `localhost` inside a pod means the pod. Here
 * every pod shares the host's loopback, so manifest values that name `localhost` or `127.0.0.1` as
 * a host (in args, command and env, e.g. an exporter's `postgresql://127.0.0.1:5432`) are
 * rewritten to the pod's own address. `127.0.0.10` or `localhost.example` are left alone.
 */
const loopbackHost = /(^|[^0-9A-Za-z.-])(127\.0\.0\.1|localhost)(?![0-9A-Za-z.-])/g;

export function rewriteLoopback(value: string, podIP: string): string {
  if (!podIP) return value;
  return value.replace(loopbackHost, (_match, lead: string) => `${lead}${podIP}`);
}
