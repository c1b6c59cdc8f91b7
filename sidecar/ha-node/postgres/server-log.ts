import { closeSync, openSync, readSync, statSync } from 'node:fs';

/**
 * The server's own log file (pg_ctl -l, beside the data directory), read back to say why a start
 * or a replay failed: the error lines written since an offset taken before the attempt, since one
 * file is shared by every start.
 */
export function serverLogSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** What a failed start or replay wrote: PostgreSQL's errors and the shell's (a restore_command that is not installed). */
export const serverErrorPattern = /FATAL|PANIC|ERROR|^sh: /;

/** The last `max` lines matching `pattern` written after `from` (at most the last 256 KB of them). */
export function serverLogLinesSince(path: string, from: number, pattern: RegExp = serverErrorPattern, max = 4): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = statSync(path).size;
    const start = Math.max(from, size - 256 * 1024);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    return buffer
      .toString('utf8')
      .split('\n')
      .filter((line) => pattern.test(line))
      .slice(-max);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
