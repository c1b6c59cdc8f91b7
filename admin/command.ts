import { Command } from 'commander';
import { failAndExit } from '../lib/cli/exit.js';

interface AdminFlags {
  listen?: string;
  databaseUrl?: string;
  redisUrl?: string;
  businessModules?: string;
  kubeconfig?: string;
}

export function createAdminCommand(): Command {
  return new Command('admin')
    .description('serve the administration backend (tokens, RBAC, system-manage and business APIs)')
    .option('--listen <address>', 'listen address, host:port or :port (env LISTEN_ADDRESS, default :8080)')
    .option('--database-url <url>', 'PostgreSQL URL (env DATABASE_URL)')
    .option('--redis-url <url>', 'Redis URL (env REDIS_URL, default redis://127.0.0.1:6379)')
    .option('--business-modules <dir>', 'folder of business modules (env BUSINESS_MODULES_DIR)')
    .option('--kubeconfig <file>', 'Kubernetes API for the database-clusters pages (env KUBECONFIG; default: the pod service account, then ~/.kube/config)')
    .action(async (flags: AdminFlags) => {
      try {
        // Loaded lazily so other subcommands do not pay for the admin's dependencies.
        const { loadAdminConfig } = await import('./config.js');
        const { startAdmin } = await import('./server.js');
        const { createLogger } = await import('../lib/log.js');
        const config = loadAdminConfig({
          listen: flags.listen,
          databaseUrl: flags.databaseUrl,
          redisUrl: flags.redisUrl,
          businessModulesDir: flags.businessModules,
          kubeconfig: flags.kubeconfig,
        });
        await startAdmin(config, createLogger({ name: 'admin' }), { handleSignals: true });
      } catch (error) {
        failAndExit(error);
      }
    });
}
