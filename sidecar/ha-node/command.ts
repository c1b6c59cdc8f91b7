import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

export function createHaNodeCommand(): Command {
  return new Command('ha-node')
    .description('supervise PostgreSQL and elect the primary through Kubernetes Leases')
    .action(() => failAndExit(new Error('ha-node is not built yet')));
}
