import type { Command } from 'commander';
import { createCtlCommand, type CtlIo } from '../../ctl/command.js';
import { createKubectlPlugin } from '../../ctl/kubectl/plugin.js';

export interface CtlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `keelson ctl` in this process (the same commander tree and actions as the binary, minus a
 * process start per call, which costs seconds on this machine) and captures its output.
 */
export async function runCtl(args: string[], answers: string[] = []): Promise<CtlResult> {
  return runInProcess((io) => createCtlCommand(io), args, answers);
}

/** `kubectl keelson` in this process, the same way. */
export async function runPlugin(args: string[]): Promise<CtlResult> {
  return runInProcess((io) => createKubectlPlugin(io), args, []);
}

/** Typed answers are taken from `answers` in order; once they run out, nobody answers. */
async function runInProcess(create: (io: CtlIo) => Command, args: string[], answers: string[]): Promise<CtlResult> {
  let stdout = '';
  let stderr = '';
  const queue = [...answers];
  const command = create({ out: (t) => (stdout += t), err: (t) => (stderr += t), ask: async (q) => ((stdout += `${q}\n`), queue.shift()) });
  command.exitOverride();
  for (const sub of command.commands) sub.exitOverride();
  process.exitCode = 0;
  await command.parseAsync(args, { from: 'user' });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { code, stdout, stderr };
}
