import { createCtlCommand } from '../../../../sidecar/ha-node/ctl/command.js';

export interface CtlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `keelson ctl` in this process (the same commander tree and actions as the binary, minus a
 * process start per call, which costs seconds on this machine) and captures its output.
 */
export async function runCtl(args: string[]): Promise<CtlResult> {
  let stdout = '';
  let stderr = '';
  const command = createCtlCommand({ out: (t) => (stdout += t), err: (t) => (stderr += t) });
  command.exitOverride();
  for (const sub of command.commands) sub.exitOverride();
  process.exitCode = 0;
  await command.parseAsync(args, { from: 'user' });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { code, stdout, stderr };
}
