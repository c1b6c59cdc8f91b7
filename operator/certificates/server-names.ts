import { names } from '../../api/naming.js';

/**
 * The names the server certificate answers to: the -rw, -ro and -r Services and both poolers'
 * (short, namespaced, .svc and cluster-local forms), and every pod under the headless Service
 * (a wildcard, so scaling needs no new certificate). Pooler names are there whether or not the
 * pooler is on: turning it on changes no certificate.
 */
export const clusterDomain = 'cluster.local';

function forms(host: string, namespace: string): string[] {
  return [host, `${host}.${namespace}`, `${host}.${namespace}.svc`, `${host}.${namespace}.svc.${clusterDomain}`];
}

export function serverCertificateHosts(clusterName: string, namespace: string): string[] {
  const n = names(clusterName);
  const services = [n.rwService, n.roService, n.rService, n.poolerRwService, n.poolerReadOnlyService];
  return [...services.flatMap((service) => forms(service, namespace)), ...forms(n.headlessService, namespace).map((host) => `*.${host}`)];
}
