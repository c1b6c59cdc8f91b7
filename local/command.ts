import { Command } from 'commander';
import { failAndExit } from '../lib/cli/exit.js';

export function createLocalCommand(): Command {
  return new Command('local')
    .description('run a single-machine Kubernetes stand-in with a real cluster (up, down, apiserver)')
    .action(() => failAndExit(new Error('local is not built yet')));
}
