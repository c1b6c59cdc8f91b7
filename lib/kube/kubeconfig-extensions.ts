import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { yaml } from '../yaml.js';
import type { KubeSources } from './kube-config.js';

/**
 * Named extensions of a kubeconfig's cluster entry (`clusters[].cluster.extensions[]`, kept by
 * kubectl, dropped by client-node): where a tool that wrote the kubeconfig leaves notes for other
 * tools about that cluster. Read from the same files loadKubeConfig reads, first file first.
 */

/**
 * Names the CONNECT proxy (`{ url: "http://127.0.0.1:PORT" }`) through which a cluster's members
 * are reached: `keelson local up` in network namespaces writes it, `keelson ctl` follows it.
 */
export const memberProxyExtension = 'keelson.io/member-proxy';

/** The kubeconfig files loadKubeConfig would read for these sources (none in a pod without one). */
export function kubeconfigFiles(sources: KubeSources = {}): string[] {
  const env = sources.env ?? process.env;
  const explicit = sources.kubeconfig ?? env.KUBECONFIG;
  if (explicit) return explicit.split(delimiter).filter((file) => file && existsSync(file));
  if (env.KUBERNETES_SERVICE_HOST) return [];
  const userConfig = join(sources.home ?? homedir(), '.kube', 'config');
  return existsSync(userConfig) ? [userConfig] : [];
}

interface NamedEntry {
  name?: unknown;
  cluster?: { extensions?: Array<{ name?: unknown; extension?: unknown }> };
}

/** The extension `name` of the cluster entry `cluster`, from the first file naming that cluster. */
export function clusterExtension(files: string[], cluster: string, name: string): unknown {
  for (const file of files) {
    let doc: { clusters?: NamedEntry[] } | null;
    try {
      doc = yaml().parse(readFileSync(file, 'utf8')) as { clusters?: NamedEntry[] } | null;
    } catch {
      continue; // loadKubeConfig reports unreadable files; an extension is only ever a hint
    }
    const entry = doc?.clusters?.find((c) => c?.name === cluster);
    if (entry) return entry.cluster?.extensions?.find((e) => e?.name === name)?.extension;
  }
  return undefined;
}
