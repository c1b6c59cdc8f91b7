import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTool } from '../../../sidecar/ha-node/postgres/runner.js';
import { processStopped, ToolActivity } from '../../../sidecar/ha-node/postgres/tool-activity.js';

/** Real child processes through runTool: a running tool is progress, a stopped one is not. */
describe('tool activity (liveness progress of long steps)', () => {
  it('is progress while a bounded tool runs, not while it is stopped, and not after it ended', async () => {
    let clock = 1_000;
    const activity = new ToolActivity(() => clock);
    const run = runTool('/bin/sleep', ['5'], { activity, timeoutMs: 10_000 });
    clock = 2_000;
    assert.equal(activity.lastProgressAt(), 2_000, 'running: progress now');
    const pid = await waitForChild();
    process.kill(pid, 'SIGSTOP');
    await waitUntil(() => processStopped(pid));
    clock = 3_000;
    assert.equal(activity.lastProgressAt(), 1_000, 'stopped: progress as of its start');
    process.kill(pid, 'SIGKILL');
    await run;
    clock = 9_000;
    assert.equal(activity.lastProgressAt(), 3_000, 'ended: when it ended');
    assert.equal(processStopped(pid), false, 'a gone process is not reported stopped');
  });

  it('ignores a tool run without a timeout (it could keep liveness green forever)', async () => {
    const activity = new ToolActivity(() => 5);
    let started = 0;
    await runTool('/bin/true', [], { activity: { started: () => (started += 1), finished: () => undefined } });
    assert.equal(started, 0);
    assert.equal(activity.lastProgressAt(), 5);
  });
});

async function waitForChild(): Promise<number> {
  const { readdirSync, readFileSync } = await import('node:fs');
  let found: number | undefined;
  await waitUntil(() => {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith('/bin/sleep')) found = Number(entry);
      } catch {
        // gone
      }
    }
    return found !== undefined;
  });
  return found!;
}

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
