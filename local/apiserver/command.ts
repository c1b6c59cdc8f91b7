import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';
import { parseListenAddress } from '../../lib/ports.js';

interface ApiServerFlags {
  listen: string;
  kubeconfig: string;
  http?: boolean;
  state?: string;
  dir?: string;
  faultInjection?: boolean;
  serviceCidr: string;
}

/** `keelson local apiserver`: the Kubernetes API stand-in as a standalone process (for kubectl and the demo). */
export function createApiServerCommand(): Command {
  return new Command('apiserver')
    .description('serve the Kubernetes API stand-in (HTTPS with a generated CA unless --http)')
    .option('--listen <address>', 'host:port to listen on (port 0 picks a free one)', '127.0.0.1:6443')
    .option('--kubeconfig <file>', 'where to write the kubeconfig for clients', './kubeconfig')
    .option('--http', 'serve plain HTTP (clients then need insecure-skip-tls-verify)')
    .option('--state <file>', 'load state from this file and save every change to it')
    .option('--dir <dir>', 'where to keep the CA and certificates (default: a temp dir)')
    .option('--service-cidr <cidr>', 'range of Service cluster IPs, inside 127.0.0.0/8', '127.1.0.0/16')
    .option('--fault-injection', 'serve the /_keelson/faults admin hook (tests only)')
    .action(async (flags: ApiServerFlags) => {
      try {
        const { resolve, dirname } = await import('node:path');
        const { startApiServer } = await import('./server.js');
        const { host, port } = parseListenAddress(flags.listen, '127.0.0.1');
        const kubeconfigPath = resolve(flags.kubeconfig);
        const server = await startApiServer({
          host,
          port,
          https: !flags.http,
          kubeconfigPath,
          dir: flags.dir ? resolve(flags.dir) : undefined,
          stateFile: flags.state ? resolve(flags.state) : undefined,
          faultInjection: flags.faultInjection ?? false,
          serviceCidr: flags.serviceCidr,
        });
        process.stdout.write(`${JSON.stringify({ url: server.url, kubeconfig: kubeconfigPath, dir: dirname(kubeconfigPath) })}\n`);
        const stop = (): void => {
          server.close().then(
            () => process.exit(0),
            (err: unknown) => failAndExit(err),
          );
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      } catch (err) {
        failAndExit(err);
      }
    });
}
