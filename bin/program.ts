import { Command } from 'commander';
import { withUsageExitCodes } from '../lib/cli/exit.js';
import { packageVersion } from '../lib/cli/version.js';
import { createOperatorCommand } from '../operator/command.js';
import { createHaNodeCommand } from '../sidecar/ha-node/command.js';
import { createCtlCommand } from '../ctl/command.js';
import { createExporterCommand } from '../sidecar/exporter/command.js';
import { createPoolerCommand } from '../sidecar/pooler/command.js';
import { createAdminCommand } from '../admin/command.js';
import { createLocalCommand } from '../local/command.js';

/** One entry point, one image: each program is a subcommand whose module loads its implementation lazily. */
export function createProgram(): Command {
  const program = new Command('keelson')
    .description('Highly available PostgreSQL on Kubernetes')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addCommand(createOperatorCommand())
    .addCommand(createHaNodeCommand())
    .addCommand(createExporterCommand())
    .addCommand(createPoolerCommand())
    .addCommand(createAdminCommand())
    .addCommand(createCtlCommand())
    .addCommand(createLocalCommand());
  return withUsageExitCodes(program);
}
