/** The real CLI for the `local up` tests, and a demo folder that `local down` and removal clean up after the file. */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after } from 'node:test';

export const run = promisify(execFile);
export const keelson = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', ...args], { timeout: 240_000 });

/** A folder for `local up --dir` (traversable by the postgres account), stopped and removed after the suite. */
export function localUpDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  after(async () => {
    if (existsSync(join(dir, 'pid'))) await keelson('local', 'down', '--dir', dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
