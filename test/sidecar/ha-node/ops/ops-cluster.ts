import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Member, repoRoot, startCluster, type ClusterOptions, type TestCluster } from '../harness.js';

/**
 * The ha-node engineer's 3-member harness with every member started through member-main.ts, so
 * the operations API is mounted. Member.start is swapped for this test process only (each test
 * file runs in its own process); everything else — addresses, env, cleanup — is the harness's.
 */
function startWithOps(this: Member): void {
  const env = (this as unknown as { env: Record<string, string> }).env;
  const log = createWriteStream(this.logPath, { flags: 'a' });
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test/sidecar/ha-node/ops/member-main.ts')], {
    cwd: repoRoot,
    env: { ...process.env, ...env, LOG_LEVEL: process.env.HA_TEST_LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  this.process = child;
}

export async function startOpsCluster(options: ClusterOptions): Promise<TestCluster> {
  Member.prototype.start = startWithOps;
  return startCluster(options);
}
