import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

export function createApiServerCommand(): Command {
  return new Command('apiserver')
    .description('serve the Kubernetes API stand-in')
    .action(() => failAndExit(new Error('local apiserver is not built yet')));
}
