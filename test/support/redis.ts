import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './ports.js';

export interface TestRedis {
  host: string;
  port: number;
  url: string;
  process: ChildProcess;
  /** Stops the server (SIGTERM) and waits for it; the folder stays so restart() can reuse the port. */
  stopServer(): Promise<void>;
  /** Starts it again on the same port (for outage tests). */
  restart(): Promise<void>;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

const redisServer = process.env.REDIS_SERVER ?? 'redis-server';

/** A throwaway redis-server on a free loopback port, with no persistence. */
export async function startRedis(): Promise<TestRedis> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), 'keelson-redis-'));
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(redisServer, ['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no'], {
      stdio: 'ignore',
    });
    const failed = new Promise<never>((_, reject) => child.once('error', (e) => reject(new Error(`cannot start ${redisServer}: ${e.message}`))));
    await Promise.race([waitForPort(host, port), failed]);
    return child;
  };
  const stopChild = async (child: ChildProcess): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  };
  const instance: TestRedis = {
    host,
    port,
    url: `redis://${host}:${port}`,
    process: await launch(),
    stopServer: () => stopChild(instance.process),
    async restart() {
      await stopChild(instance.process);
      instance.process = await launch();
    },
    async stop() {
      await stopChild(instance.process);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return instance;
}
