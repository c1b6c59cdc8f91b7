import { Command } from 'commander';
import { createApiServerCommand } from './apiserver/command.js';
import { createNodeAgentCommand } from './node/command.js';
import { createClusterCommands } from './cluster/command.js';

/** `keelson local`: the single-machine Kubernetes stand-in and the one-command demo cluster. */
export function createLocalCommand(): Command {
  const local = new Command('local').description('run a single-machine Kubernetes stand-in with a real cluster (up, down, apiserver, node)');
  local.addCommand(createApiServerCommand());
  local.addCommand(createNodeAgentCommand());
  for (const command of createClusterCommands()) local.addCommand(command);
  return local;
}
