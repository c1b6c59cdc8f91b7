/**
 * Network namespaces for pods (ADR 0354). This folder holds the primitives the node agent uses in
 * namespace mode: the isolation check, the node bridge, per-pod namespaces with a veth to the
 * bridge, partitions for tests, and running a command in a fresh isolated namespace. Everything
 * goes through iproute2 (`ip`), util-linux (`nsenter`, `unshare`) and `nft`.
 *
 * This file runs those tools and turns a failure into an error that names the command.
 */
import { execFile } from 'node:child_process';

export class NetworkCommandError extends Error {
  constructor(
    readonly argv: string[],
    readonly stderr: string,
  ) {
    super(`${argv.join(' ')}: ${stderr.trim() || 'failed'}`);
  }
}

/** Runs a command to completion; `input` goes to its stdin. Resolves with stdout. */
export function runTool(argv: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(argv[0], argv.slice(1), { timeout: 10_000, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new NetworkCommandError(argv, stderr || err.message));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** `ip [-n namespace] -j <args>` parsed as JSON (an empty answer is an empty list). */
export async function ipJson<T>(args: string[], namespace?: string): Promise<T[]> {
  const out = await runTool(['ip', ...(namespace ? ['-n', namespace] : []), '-j', ...args]);
  return out.trim() ? (JSON.parse(out) as T[]) : [];
}

export function ip(args: string[], namespace?: string): Promise<string> {
  return runTool(['ip', ...(namespace ? ['-n', namespace] : []), ...args]);
}
