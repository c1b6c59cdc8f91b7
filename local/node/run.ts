/**
 * `keelson local node` in-process: the StatefulSet, Deployment and Endpoints controllers (unless
 * a real controller manager runs them), the node agent and the service proxy, all against one API
 * server reached through a kubeconfig.
 */
import { createHash } from 'node:crypto';
import { chown, chmod, mkdir, readFile } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import YAML from 'yaml';
import type { Logger } from '../../lib/log.js';
import { startDeploymentController } from '../controllers/deployment-controller.js';
import { startEndpointsController } from '../controllers/endpoints-controller.js';
import { startStatefulSetController, type Controller } from '../controllers/statefulset-controller.js';
import { ensureLocalStorageClass } from '../controllers/storage-class.js';
import { startServiceProxy, type ServiceProxy } from '../proxy/proxy.js';
import { AddressPool } from './addresses.js';
import { startNodeAgent, type NodeAgent } from './agent.js';
import { kubeletBackoff, type BackoffPolicy } from './backoff.js';
import { containerCliArgv } from './compiled-cli.js';
import { builtinImageMappings, type ImageMapping } from './images.js';
import type { LocalUser } from './pod-worker.js';
import { kubeconfigDocument, writeKubeconfigFile } from './pod-kubeconfig.js';
import { killContainerProcesses } from './process.js';
import { guardAgainstOrphans } from './watchdog.js';
import { prepareNamespaceMode, type NamespaceMode, type NetworkMode } from './netns/node-mode.js';

export interface LocalNodeOptions {
  kubeconfigPath: string;
  dir: string;
  nodeName?: string;
  /** /24 inside 127.0.0.0/8 for pod and Service addresses (default 127.0.0). */
  ipPrefix?: string;
  /** Extra image mappings, tried before the built-in keelson mapping. */
  images?: ImageMapping[];
  /** Local account for containers that must not run as root (default `postgres` when it exists). */
  runAsUser?: string;
  backoff?: Partial<BackoffPolicy>;
  /** `namespace`: pods in their own network namespaces (root, inside an isolated namespace; ADR 0354). */
  network?: NetworkMode;
  /** Private /24 of pod addresses in namespace mode (default 10.213.0). */
  podNetwork?: string;
  /**
   * `none`: no StatefulSet, Deployment or Endpoints controller here, because a real
   * kube-controller-manager runs them (the node agent and the proxy only). Default `local`.
   */
  controllers?: 'local' | 'none';
  logger: Logger;
}

export interface LocalNode {
  agent: NodeAgent;
  proxy: ServiceProxy;
  addresses: AddressPool;
  close(graceMs?: number): Promise<void>;
}

/** uid/gid of a local account from /etc/passwd, or undefined when it does not exist. */
export function lookupUser(name: string, passwd = '/etc/passwd'): LocalUser | undefined {
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/** The first ancestor of dir that other users cannot pass through (no o+x), if any. */
export function untraversableAncestor(dir: string): string | undefined {
  let current = dirname(dir);
  for (;;) {
    try {
      if ((statSync(current).mode & 0o001) === 0) return current;
    } catch {
      return current;
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Reads an image mapping file: a YAML/JSON list of {repository, entrypoint, cmd?, aliases?}. */
export async function loadImageMappings(file: string): Promise<ImageMapping[]> {
  const parsed: unknown = YAML.parse(await readFile(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`image map ${file}: expected a list of {repository, entrypoint}`);
  return parsed.map((entry: unknown, index) => {
    const item = entry as Partial<ImageMapping> | null;
    if (!item || typeof item.repository !== 'string' || !Array.isArray(item.entrypoint) || !item.entrypoint.every((a) => typeof a === 'string')) {
      throw new Error(`image map ${file}: entry ${index} needs repository (string) and entrypoint (list of strings)`);
    }
    return { repository: item.repository, entrypoint: item.entrypoint, cmd: item.cmd, aliases: item.aliases };
  });
}

export async function startLocalNode(options: LocalNodeOptions): Promise<LocalNode> {
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const logger = options.logger;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const nodeName = options.nodeName ?? 'keelson-local';
  const isRoot = process.getuid?.() === 0;
  const userName = options.runAsUser ?? 'postgres';
  const nonRootUser = isRoot ? lookupUser(userName) : undefined;
  if (isRoot && !nonRootUser) logger.warn({ user: userName }, 'no such local account: containers that must not run as root will fail to start');
  if (nonRootUser) {
    await chown(dir, 0, nonRootUser.gid).then(() => chmod(dir, 0o750));
    const blocked = untraversableAncestor(dir);
    if (blocked)
      logger.warn(
        { dir, blocked, user: nonRootUser.name },
        `containers running as ${nonRootUser.name} cannot reach ${dir}: make ${blocked} traversable (chmod o+x)`,
      );
  }

  // Processes of a previous run of this node (same --dir) that outlived it.
  const markerPrefix = `${createHash('sha256').update(dir).digest('hex').slice(0, 12)}/`;
  const leftovers = killContainerProcesses(markerPrefix, 'SIGKILL', true);
  if (leftovers > 0) logger.info({ killed: leftovers }, 'killed processes left over by a previous run');

  const server = new URL(kc.getCurrentCluster()?.server ?? 'https://127.0.0.1:6443');
  let namespaceMode: NamespaceMode | undefined;
  if (options.network === 'namespace') {
    namespaceMode = await prepareNamespaceMode({ markerPrefix, podNetwork: options.podNetwork, apiServer: server, logger });
  }
  // Service addresses: the loopback /24, or in namespace mode the node namespace's private Service /24.
  const addresses = namespaceMode?.serviceAddresses ?? new AddressPool(options.ipPrefix ?? '127.0.0');
  // Containers get a copy with certificates inlined, readable by the non-root account, because the
  // original may be private to root or point at private files (pods with a token get their own).
  const podKubeconfig = await writeKubeconfigFile(dir, kubeconfigDocument(kc), nonRootUser);
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    KUBECONFIG: podKubeconfig,
    KUBERNETES_SERVICE_HOST: server.hostname,
    KUBERNETES_SERVICE_PORT: server.port || (server.protocol === 'https:' ? '443' : '80'),
  };
  if (process.env.LANG) baseEnv.LANG = process.env.LANG;

  const controllers: Controller[] = [];
  const closeAll = async (graceMs?: number): Promise<void> => {
    try {
      await Promise.allSettled(controllers.map((c) => c.close()));
      if (agent) await agent.close(graceMs);
    } finally {
      // Whatever failed above: the Service proxies' listeners would keep the process alive.
      if (proxy) await proxy.close();
      orphanGuard.stop();
    }
  };
  let agent: NodeAgent | undefined;
  let proxy: ServiceProxy | undefined;
  const orphanGuard = guardAgainstOrphans(markerPrefix);
  try {
    proxy = await startServiceProxy({ kubeConfig: kc, addresses, backendScope: namespaceMode ? 'namespace' : 'loopback', logger });
    await ensureLocalStorageClass(kc);
    if (options.controllers !== 'none') {
      controllers.push(await startStatefulSetController(kc, logger));
      controllers.push(await startDeploymentController(kc, logger));
      controllers.push(await startEndpointsController(kc, logger));
    }
    agent = await startNodeAgent({
      kubeConfig: kc,
      nodeName,
      dir,
      addresses: namespaceMode?.podAddresses ?? addresses,
      network: namespaceMode?.network,
      hostIP: namespaceMode?.hostIP,
      images: [...(options.images ?? []), ...builtinImageMappings(undefined, await containerCliArgv(logger))],
      baseEnv,
      nonRootUser,
      backoff: { ...kubeletBackoff, ...options.backoff },
      markerPrefix,
      logger: logger.child({ component: 'agent' }),
    });
  } catch (err) {
    await closeAll();
    throw err;
  }
  const started = { agent, proxy };
  logger.info(
    {
      node: nodeName,
      dir,
      volumes: agent.volumeMode,
      servicePrefix: addresses.prefix,
      network: options.network ?? 'loopback',
      podNetwork: namespaceMode?.subnet.prefix,
    },
    'local node running',
  );
  return { ...started, addresses, close: closeAll };
}
