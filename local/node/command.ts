import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

interface NodeFlags {
  kubeconfig: string;
  dir: string;
  nodeName: string;
  ipPrefix: string;
  imageMap?: string;
  runAsUser: string;
  shutdownGrace: string;
  network: string;
  podNetwork?: string;
}

export function createNodeAgentCommand(): Command {
  return new Command('node')
    .description('run the controllers, node agent and service proxy against an API server')
    .requiredOption('--kubeconfig <file>', 'kubeconfig of the API server')
    .requiredOption('--dir <dir>', 'folder for pod volumes, claims and container logs')
    .option('--node-name <name>', 'name of the Node this agent registers', 'keelson-local')
    .option('--ip-prefix <a.b.c>', '/24 inside 127.0.0.0/8 for pod and Service addresses', '127.0.0')
    .option('--image-map <file>', 'YAML/JSON list of {repository, entrypoint, cmd?, aliases?} image mappings')
    .option('--run-as-user <name>', 'local account for containers that must not run as root', 'postgres')
    .option('--shutdown-grace <seconds>', 'grace period for pods when the node stops', '10')
    .option('--network <mode>', 'loopback (pods on 127.x addresses) or namespace (pods in network namespaces: root, inside an isolated namespace)', 'loopback')
    .option('--pod-network <a.b.c>', 'private /24 of pod addresses in namespace mode', '10.213.0')
    .action(async (flags: NodeFlags) => {
      try {
        const { createLogger } = await import('../../lib/log.js');
        const { startLocalNode, loadImageMappings } = await import('./run.js');
        const { parseNetworkMode } = await import('./netns/node-mode.js');
        const logger = createLogger({ name: 'local-node' });
        const grace = Number(flags.shutdownGrace);
        if (!Number.isFinite(grace) || grace < 0) throw new Error(`--shutdown-grace must be a number of seconds, got "${flags.shutdownGrace}"`);
        const node = await startLocalNode({
          kubeconfigPath: flags.kubeconfig,
          dir: flags.dir,
          nodeName: flags.nodeName,
          ipPrefix: flags.ipPrefix,
          images: flags.imageMap ? await loadImageMappings(flags.imageMap) : [],
          runAsUser: flags.runAsUser,
          network: parseNetworkMode(flags.network),
          podNetwork: flags.podNetwork,
          logger,
        });
        let stopping = false;
        const stop = (signal: string): void => {
          if (stopping) return;
          stopping = true;
          logger.info({ signal }, 'stopping local node');
          node.close(grace * 1000).then(
            () => process.exit(0),
            (err: unknown) => failAndExit(err),
          );
        };
        process.on('SIGTERM', () => stop('SIGTERM'));
        process.on('SIGINT', () => stop('SIGINT'));
      } catch (err) {
        failAndExit(err);
      }
    });
}
