import { Command, Option } from 'commander';
import { failAndExit } from '../../lib/cli/exit.js';

interface UpFlags {
  dir: string;
  ipPrefix: string;
  instances: string;
  detach?: boolean;
  timeout: string;
  faultInjection?: boolean;
  network: string;
  install: boolean;
}

export function createClusterCommands(): Command[] {
  const up = new Command('up')
    .description('start the stand-in, the operator and a DatabaseCluster "demo"; wait until Ready and print how to connect')
    .option('--dir <dir>', 'where state, logs and DIR/kubeconfig go', '.keelson-local')
    .option('--instances <n>', 'instances of the demo cluster', '3')
    .option('--detach', 'run in the background and return once Ready (stop with keelson local down)')
    .option('--timeout <seconds>', 'deadline for Ready, from the start (exits non-zero with a summary of every pod not Ready)', '180')
    .option('--ip-prefix <a.b.c>', '/24 inside 127.0.0.0/8 for pod and Service addresses (loopback network)', '127.0.0')
    .option('--fault-injection', "serve the stand-in's /_keelson/faults hook to the admin credentials (tests and demos)")
    .option('--no-install', 'never install missing packages (as root it otherwise runs apt-get); stop with exit code 2 and the command instead')
    .option(
      '--network <mode>',
      'auto (default): namespace when root with ip, nsenter and nft, else loopback; namespace: pods in network namespaces inside an isolated node namespace, reached through 127.0.0.1 forwarders; loopback: pods on 127.X addresses',
      'auto',
    )
    .addOption(new Option('--foreground-child').hideHelp())
    .addOption(new Option('--isolated-child').hideHelp())
    .action(async (flags: UpFlags & { foregroundChild?: boolean; isolatedChild?: boolean }) => {
      try {
        const instances = Number(flags.instances);
        if (!Number.isInteger(instances) || instances < 1 || instances > 9) throw new Error('--instances must be an integer from 1 to 9');
        const timeout = Number(flags.timeout);
        if (!Number.isFinite(timeout) || timeout <= 0) throw new Error('--timeout must be a positive number of seconds');
        if (!/^127\.\d{1,3}\.\d{1,3}$/.test(flags.ipPrefix)) throw new Error('--ip-prefix must look like 127.0.0');
        // What the pods run must be here before anything starts: install it as root, else say how (exit 2).
        const { localUpParts } = await import('./doctor.js');
        const { ensurePrerequisites } = await import('../../lib/prerequisites/ensure.js');
        if (!flags.foregroundChild && !flags.isolatedChild)
          ensurePrerequisites(localUpParts(flags.network), { install: flags.install !== false, say: (line) => process.stdout.write(`${line}\n`) });
        const { packageVersion } = await import('../../lib/cli/version.js');
        const { runLocalUpDetached, runLocalUpForeground } = await import('./up.js');
        const { chooseNetwork, withNetwork } = await import('./network-choice.js');
        const { mode: network, reason } = await chooseNetwork(flags.network);
        if (!flags.foregroundChild && !flags.isolatedChild) process.stdout.write(`network: ${network}: ${reason}\n`);
        const options = {
          dir: flags.dir,
          instances,
          detach: Boolean(flags.detach),
          out: (line: string) => process.stdout.write(`${line}\n`),
          operatorVersion: packageVersion(),
          readyTimeoutMs: timeout * 1000,
          ipPrefix: flags.ipPrefix,
          faultInjection: Boolean(flags.faultInjection),
          network,
        };
        if (flags.detach) {
          const argv = process.argv.slice(1).filter((arg) => arg !== '--detach');
          await runLocalUpDetached(options, [...withNetwork(argv, network), '--foreground-child']);
          process.exit(0);
        }
        if (network === 'namespace' && !flags.isolatedChild) {
          // This process stays in the host's namespace and serves the forwarders; the stack runs isolated.
          const { runLocalUpIsolated } = await import('./up-namespace.js');
          await runLocalUpIsolated(flags.dir, [...withNetwork(process.argv.slice(1), network), '--isolated-child']);
          return;
        }
        await runLocalUpForeground(options);
        if (!flags.foregroundChild) process.stdout.write('running; press Ctrl-C to stop\n');
      } catch (err) {
        failAndExit(err);
      }
    });
  const down = new Command('down')
    .description('stop everything local up started')
    .option('--dir <dir>', 'the directory given to local up', '.keelson-local')
    .action(async (flags: { dir: string }) => {
      try {
        const { runLocalDown } = await import('./up.js');
        await runLocalDown(flags.dir, (line) => process.stdout.write(`${line}\n`));
      } catch (err) {
        failAndExit(err);
      }
    });
  const doctor = new Command('doctor')
    .description(
      'check what Keelson needs from this machine (PostgreSQL, pgBackRest, PgBouncer, network tools, test servers); --install installs what is missing (root, apt-get)',
    )
    .option('--for <parts>', 'comma-separated parts: local, network, tests, oracle (default: what local up needs here)')
    .option('--install', 'install what is missing with apt-get (root only)')
    .option('--quiet', 'print the table only when something is missing')
    .action(async (flags: { for?: string; install?: boolean; quiet?: boolean }) => {
      try {
        const { runDoctor } = await import('./doctor.js');
        process.exitCode = runDoctor(
          flags,
          (line) => process.stdout.write(`${line}\n`),
          (line) => process.stderr.write(`${line}\n`),
        );
      } catch (err) {
        failAndExit(err);
      }
    });
  return [up, down, doctor];
}
