import { Command } from 'commander';
import { failAndExit } from '../../../lib/cli/exit.js';

export function createCtlCommand(): Command {
  return new Command('ctl')
    .description('operate a cluster through the ha-node REST API (list, switchover, restart, ...)')
    .action(() => failAndExit(new Error('ctl is not built yet')));
}
