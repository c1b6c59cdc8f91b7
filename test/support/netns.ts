/**
 * Test files that need pods in network namespaces run themselves again inside a fresh isolated
 * namespace (`unshare --net`): the outer run (in the host's namespace) only starts the inner one
 * and asserts it passed; the inner run checks its namespace is isolated before anything else, so
 * no packet to a pod address can be sent from a namespace with a way out of the machine.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { assertIsolated } from '../../local/node/netns/isolation.js';
import { insideIsolatedRun, spawnIsolated } from '../../local/node/netns/isolated-run.js';

/**
 * In the host's namespace: one test that runs `fileUrl` isolated and returns false. Inside the
 * isolated run: asserts isolation (throwing ends the file before any test) and returns true.
 */
export async function enterIsolatedRun(fileUrl: string, timeoutMs: number): Promise<boolean> {
  if (!insideIsolatedRun()) {
    it(`passes inside an isolated network namespace (${fileURLToPath(fileUrl).split('/test/').pop()})`, { timeout: timeoutMs }, async () => {
      // Without the runner's context variable the inner run is a test run of its own, not a nested one.
      const env = { ...process.env };
      delete env.NODE_TEST_CONTEXT;
      const child = spawnIsolated([process.execPath, '--import', 'tsx', '--test', '--test-force-exit', '--test-reporter=spec', fileURLToPath(fileUrl)], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let report = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        report += chunk.toString();
        process.stderr.write(chunk);
      });
      const code = await new Promise<number>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (exitCode) => resolve(exitCode ?? 1));
      });
      assert.equal(code, 0, 'the isolated run failed (its report is above)');
      const ran = Number(/ℹ pass (\d+)/.exec(report)?.[1] ?? 0);
      assert.ok(ran > 0, 'the isolated run passed no test');
    });
    return false;
  }
  await assertIsolated();
  return true;
}
