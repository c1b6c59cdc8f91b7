import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

export function createNodeAgentCommand(): Command {
  return new Command('node')
    .description('run the controllers, node agent and service proxy against an API server')
    .action(() => failAndExit(new Error('local node is not built yet')));
}
