import { Command, CommanderError } from 'commander';

/** Exit codes every subcommand shares. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
} as const;

/**
 * Makes a command tree report usage errors with exit code 2 (commander's default is 1) and
 * keeps help and version at 0. Applied recursively because addCommand() does not inherit settings.
 */
export function withUsageExitCodes(command: Command): Command {
  command.exitOverride((error: CommanderError) => {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
      process.exit(ExitCode.ok);
    }
    if (error.code === 'commander.executeSubCommandAsync') throw error;
    process.exit(ExitCode.usage);
  });
  command.showHelpAfterError('(run with --help for usage)');
  for (const sub of command.commands) withUsageExitCodes(sub);
  return command;
}

/**
 * Prints a failure from a subcommand action as one line and exits 1, or with the error's own
 * `exitCode` (2 for something the user must do first); never a stack for expected errors.
 */
export function failAndExit(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`keelson: ${message}\n`);
  if (process.env.KEELSON_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  const own = error instanceof Error && 'exitCode' in error ? error.exitCode : undefined;
  process.exit(own === ExitCode.usage ? ExitCode.usage : ExitCode.failure);
}
