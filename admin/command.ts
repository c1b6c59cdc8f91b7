import { Command } from 'commander';
import { failAndExit } from '../lib/cli/exit.js';

export function createAdminCommand(): Command {
  return new Command('admin')
    .description('serve the administration backend (tokens, RBAC, system-manage and business APIs)')
    .action(() => failAndExit(new Error('admin is not built yet')));
}
