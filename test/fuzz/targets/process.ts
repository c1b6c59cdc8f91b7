import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Fuzz targets run as real `keelson` processes, as in production: the campaign can see one exit,
 * read its RSS and every line it logs (stdout and stderr are kept in memory).
 */
export const repoRoot = new URL('../../../', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  logs(): string;
  exited(): string | undefined;
  /** Resolves with the first stdout line that parses as JSON (servers that print where they listen). */
  firstJsonLine(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export function spawnKeelson(args: string[], env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', `${repoRoot}bin/keelson.ts`, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const lineWaiters: Array<() => void> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const wake of lineWaiters.splice(0)) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.on('exit', () => {
    for (const wake of lineWaiters.splice(0)) wake();
  });
  const exited = (): string | undefined =>
    child.exitCode !== null || child.signalCode !== null
      ? `exit code ${child.exitCode}, signal ${child.signalCode}; last log: ${output.slice(-600)}`
      : undefined;
  return {
    child,
    pid: child.pid ?? 0,
    logs: () => output,
    exited,
    async firstJsonLine() {
      for (;;) {
        for (const line of output.split('\n')) {
          try {
            const parsed = JSON.parse(line) as unknown;
            if (parsed && typeof parsed === 'object' && 'url' in parsed) return parsed as Record<string, unknown>;
          } catch {
            // a log line or a partial one
          }
        }
        const ended = exited();
        if (ended) throw new Error(`process ended before printing its address: ${ended}`);
        await new Promise<void>((resolve) => lineWaiters.push(resolve));
      }
    },
    async stop() {
      if (exited()) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** Polls url until it answers (any status) or the time is up. */
export async function waitForHttp(url: string, server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ended = server.exited();
    if (ended) throw new Error(`server exited while starting: ${ended}`);
    try {
      await (await fetch(url, { signal: AbortSignal.timeout(2000) })).arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Header of an HTTP basic authorization. */
export const basicAuth = (user: string, password: string): [string, string] => [
  'Authorization',
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
];

/** A JWT-shaped token that must be refused: alg none, or signed with a key nobody holds. */
export const forgedJwts: readonly string[] = [
  `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"userId":1,"tokenType":"accessToken","exp":9999999999}').toString('base64url')}.`,
  `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"userId":1,"roleCodes":["R_SUPER"],"tokenType":"accessToken","exp":9999999999}').toString('base64url')}.c2lnbmF0dXJl`,
];
