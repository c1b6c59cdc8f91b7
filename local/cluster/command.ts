import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

export function createClusterCommands(): Command[] {
  return [
    new Command('up').description('start the stand-in, the operator and a 3-instance DatabaseCluster').action(() => failAndExit(new Error('local up is not built yet'))),
    new Command('down').description('stop everything local up started').action(() => failAndExit(new Error('local down is not built yet'))),
  ];
}
