import { Command } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

export function createExporterCommand(): Command {
  return new Command('exporter')
    .description('serve PostgreSQL metrics and health checks (pg_exporter compatible)')
    .action(() => failAndExit(new Error('exporter is not built yet')));
}
