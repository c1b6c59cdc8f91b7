import { Command, Option } from 'commander';
import { addGlobalOptions, collect, type CtlFlags } from './options.js';

/** Where ctl writes; tests pass their own to run commands in-process. */
export interface CtlIo {
  out(text: string): void;
  err(text: string): void;
  /** Typed answers (remove's confirmation); without it they are read from stdin. */
  ask?(question: string): Promise<string | undefined>;
}

/** patronictl's optional positional cluster name (`list demo`): the same as --cluster, which it must agree with. */
const clusterArgument = ['[cluster]', 'cluster name (as --cluster; both given must agree)'] as const;

function clusterArgumentOf(command: Command): string | undefined {
  const index = command.registeredArguments.findIndex((argument) => argument.name() === 'cluster');
  return index < 0 ? undefined : (command.processedArgs[index] as string | undefined);
}

/**
 * `keelson ctl`: operate a cluster through the ha-node REST API, as patronictl does for Patroni.
 * Members come from the cluster's Leases (Kubernetes API) or from --url. Exit codes: 0 done,
 * 1 refused or failed, 2 usage, 3 no member or API server reachable.
 */
export function createCtlCommand(io?: CtlIo): Command {
  const ctl = addGlobalOptions(new Command('ctl').description('operate a cluster through the ha-node REST API (list, switchover, restart, ...)'));

  const run =
    (action: (ctx: import('./actions.js').CtlContext, impl: typeof import('./actions.js')) => Promise<number>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args[args.length - 1] as Command;
      const { execute } = await import('./run.js');
      process.exitCode = await execute({ ...command.optsWithGlobals<CtlFlags>(), clusterArgument: clusterArgumentOf(command) }, action, process.env, io);
    };

  const runBackup = (action: (ctx: import('./actions.js').CtlContext, impl: typeof import('./backup-actions.js')) => Promise<number>) =>
    run(async (ctx) => action(ctx, await import('./backup-actions.js')));

  for (const topology of [false, true]) {
    const list = ctl
      .command(topology ? 'topology' : 'list')
      .description(topology ? 'members as a tree under the leader' : 'members with role, state, timeline, lag, pending restart and tags')
      .argument(...clusterArgument)
      .option('-e, --extended', 'add receive/replay LSN and lag and the scheduled restart of each member')
      .option('-w, --watch <seconds>', 'refresh every so many seconds until interrupted')
      .option('-W', 'refresh every 2 seconds (--watch 2)')
      .option('--count <n>', 'with --watch: stop after n refreshes');
    list.action(
      run((ctx, a) => {
        const o = list.opts<{ extended?: boolean; watch?: string; W?: boolean; count?: string }>();
        return a.listCommand(ctx, topology, { extended: o.extended, watch: o.watch ?? (o.W ? '2' : undefined), count: o.count });
      }),
    );
  }
  ctl
    .command('history')
    .description('timeline history (failovers and switchovers)')
    .argument(...clusterArgument)
    .action(run((ctx, a) => a.historyCommand(ctx)));
  ctl
    .command('show-config')
    .description('the dynamic configuration (YAML, or -o json)')
    .argument(...clusterArgument)
    .action(run((ctx, a) => a.showConfigCommand(ctx)));
  const editConfig = ctl
    .command('edit-config')
    .description('change the dynamic configuration in $EDITOR or with --set, show the diff, confirm, apply')
    .argument(...clusterArgument)
    .option('-s, --set <key=value>', 'set a (dotted) key; a YAML value, "null" or empty removes the key (repeatable)', collect, [])
    .option('--force', 'apply without asking');
  editConfig.action(run((ctx, a) => a.editConfigCommand(ctx, editConfig.opts<{ set: string[]; force?: boolean }>())));
  ctl
    .command('pause')
    .description('disable automatic failover (maintenance mode)')
    .argument(...clusterArgument)
    .action(run((ctx, a) => a.pauseCommand(ctx, true)));
  ctl
    .command('resume')
    .description('enable automatic failover again')
    .argument(...clusterArgument)
    .action(run((ctx, a) => a.pauseCommand(ctx, false)));

  for (const action of ['switchover', 'failover'] as const) {
    const sub = ctl
      .command(action)
      .description(
        action === 'switchover' ? 'hand the primary role to another member (now or --scheduled)' : 'promote a candidate, also when the cluster has no leader',
      )
      .argument(...clusterArgument)
      .option('--leader <name>', action === 'switchover' ? 'current leader (default: the one holding the lock)' : 'current leader (makes it a switchover)')
      .option('--scheduled <time>', 'ISO 8601 time with offset, or "now"')
      .option('--force', 'do not ask for confirmation');
    if (action === 'failover') sub.requiredOption('--candidate <name>', 'member to promote');
    else sub.option('--candidate <name>', 'member to promote (default: the most advanced eligible replica)');
    sub.action(run((ctx, a) => a.switchoverCommand(ctx, action, sub.opts())));
  }

  const restart = ctl
    .command('restart')
    .description('restart PostgreSQL on the named members (all when none is named)')
    .argument('[members...]')
    .addOption(new Option('--role <role>', 'only members with this role').choices(['primary', 'leader', 'replica', 'any']))
    .option('-p, --pending', 'only members with a pending restart')
    .option('--pg-version <version>', 'only members running an older PostgreSQL version')
    .option('--timeout <seconds>', 'how long to wait for PostgreSQL to start')
    .option('--scheduled <time>', 'ISO 8601 time with offset, or "now"')
    .option('--force', 'do not ask for confirmation');
  restart.action(run((ctx, a) => a.restartCommand(ctx, restart.processedArgs[0] as string[], restart.opts())));

  const reload = ctl
    .command('reload')
    .description('re-read the configuration on the named members (all when none is named)')
    .argument('[members...]')
    .option('--force', 'do not ask for confirmation');
  reload.action(run((ctx, a) => a.reloadCommand(ctx, reload.processedArgs[0] as string[], reload.opts<{ force?: boolean }>().force)));

  const reinit = ctl
    .command('reinit')
    .description("delete a replica's data directory and clone it again from the leader")
    .argument('<members...>')
    .option('--force', 'do not ask for confirmation (also lets a node stuck in recovery be reinitialized)')
    .option('--from-leader', 'take the base backup from the leader');
  reinit.action(run((ctx, a) => a.reinitCommand(ctx, reinit.processedArgs[0] as string[], reinit.opts())));

  const roleOption = () => new Option('-r, --role <role>', 'member of this role (default leader)').choices(['leader', 'primary', 'replica', 'any']);
  const dsn = ctl.command('dsn').description("connection string (host, port) of a member's PostgreSQL").argument('[member]').addOption(roleOption());
  dsn.action(run((ctx, a) => a.dsnCommand(ctx, { member: dsn.processedArgs[0] as string | undefined, role: dsn.opts<{ role?: string }>().role })));

  const query = ctl
    .command('query')
    .description('run SQL on a member (the leader by default) and print the rows; password from PGPASSWORD or ~/.pgpass')
    .option('--command <sql>', 'the SQL to run')
    .option('-f, --file <path>', 'read the SQL from a file ("-" for stdin)')
    .option('-m, --member <name>', 'member to run it on')
    .addOption(roleOption())
    .option('-d, --dbname <name>', 'database (default PGDATABASE or postgres)')
    .option('-U, --db-user <name>', 'PostgreSQL user (default PGUSER or postgres)')
    .addOption(
      new Option('--sslmode <mode>', "TLS as libpq's sslmode (default PGSSLMODE; verify-full when the CA is known)").choices([
        'disable',
        'require',
        'verify-ca',
        'verify-full',
      ]),
    )
    .option('--sslrootcert <file>', "CA bundle to verify the member with (default PGSSLROOTCERT, else the cluster Secret's ca.crt)");
  query.action(run((ctx, a) => a.queryCommand(ctx, query.opts())));

  const rotate = ctl
    .command('rotate-certificates')
    .description('new server and replication certificates (or, with --ca, a new cluster CA) from the operator; waits until every member serves them')
    .argument(...clusterArgument)
    .option(
      '--ca',
      "rotate the cluster CA: trusted first, signing once kubelets have the bundle (the operator's --ca-trust-propagation, 3 minutes by default), then the certificates are re-issued from it",
    )
    .option('--timeout <seconds>', 'how long to wait for every member to serve the new certificate', '600');
  rotate.action(
    run(async (ctx) => (await import('./rotate-certificates.js')).rotateCertificatesCommand(ctx, rotate.opts<{ ca?: boolean; timeout?: string }>())),
  );

  const flush = ctl
    .command('flush')
    .description('cancel a scheduled restart (of the named members, all by default) or the scheduled switchover')
    .argument('<what>', 'restart or switchover')
    .argument('[members...]')
    .addOption(new Option('--role <role>', 'only members with this role').choices(['leader', 'primary', 'replica', 'any']))
    .option('--force', 'do not ask for confirmation');
  flush.action(run((ctx, a) => a.flushCommand(ctx, flush.processedArgs[0] as string, flush.processedArgs[1] as string[], flush.opts())));

  ctl
    .command('remove')
    .description("delete the cluster's whole DCS state (its Leases) after typed confirmations; stop its members first")
    .action(run((ctx, a) => a.removeCommand(ctx)));

  const backup = ctl
    .command('backup')
    .description('start a backup on the primary (pgBackRest)')
    .addOption(new Option('--type <type>', 'backup type').choices(['full', 'diff', 'incr']).default('full'));
  backup.action(runBackup((ctx, b) => b.backupCommand(ctx, backup.opts<{ type: string }>().type)));
  ctl
    .command('backups')
    .description('backups in the repository, their WAL range and the restorable window')
    .action(runBackup((ctx, b) => b.backupsCommand(ctx)));
  ctl
    .command('restore-window')
    .description('earliest and latest restorable time and LSN of each repository')
    .argument(...clusterArgument)
    .action(runBackup((ctx, b) => b.restoreWindowCommand(ctx)));
  return ctl;
}
