import { Command } from 'commander';
import { failAndExit } from '../lib/cli/exit.js';

export function createOperatorCommand(): Command {
  return new Command('operator')
    .description('reconcile DatabaseCluster objects into Kubernetes resources')
    .action(() => failAndExit(new Error('operator is not built yet')));
}
