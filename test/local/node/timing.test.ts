import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressPool } from '../../../local/node/addresses.js';
import { RestartBackoff, kubeletBackoff, restartDelayMs, shouldRestart } from '../../../local/node/backoff.js';
import { ProbeState, nextProbeAt, probeTiming } from '../../../local/node/probes.js';

test('probe timing applies the Kubernetes defaults and forces successThreshold 1 outside readiness', () => {
  assert.deepEqual(probeTiming({}, 'readiness'), { initialDelayMs: 0, periodMs: 10_000, timeoutMs: 1000, successThreshold: 1, failureThreshold: 3 });
  const liveness = probeTiming({ initialDelaySeconds: 5, periodSeconds: 2, timeoutSeconds: 3, successThreshold: 4, failureThreshold: 2 }, 'liveness');
  assert.deepEqual(liveness, { initialDelayMs: 5000, periodMs: 2000, timeoutMs: 3000, successThreshold: 1, failureThreshold: 2 });
  assert.equal(probeTiming({ successThreshold: 2 }, 'readiness').successThreshold, 2);
  assert.equal(nextProbeAt(liveness, 1000), 6000);
  assert.equal(nextProbeAt(liveness, 1000, 6100), 8100);
});

test('readiness starts failed and needs successThreshold successes, failureThreshold failures to flip back', () => {
  const state = new ProbeState('readiness', probeTiming({ successThreshold: 2, failureThreshold: 2 }, 'readiness'));
  assert.equal(state.result, 'failure');
  assert.equal(state.record(true), false);
  assert.equal(state.record(true), true);
  assert.equal(state.result, 'success');
  assert.equal(state.record(false), false);
  assert.equal(state.record(true), false);
  assert.equal(state.record(false), false);
  assert.equal(state.record(false), true);
  assert.equal(state.result, 'failure');
});

test('liveness starts succeeded and reports the failure threshold crossing', () => {
  const state = new ProbeState('liveness', probeTiming({ failureThreshold: 3 }, 'liveness'));
  assert.equal(state.result, 'success');
  assert.equal(state.record(false), false);
  assert.equal(state.record(false), false);
  assert.equal(state.record(false), true);
  assert.equal(state.result, 'failure');
  const startup = new ProbeState('startup', probeTiming({ failureThreshold: 2 }, 'startup'));
  assert.equal(startup.record(false), false);
  assert.equal(startup.record(false), true);
});

test('restart back-off: immediate first restart, then 10 s doubling to the 5 min cap, reset after a long run', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8].map((n) => restartDelayMs(kubeletBackoff, n)),
    [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000],
  );
  const backoff = new RestartBackoff({ initialMs: 100, maxMs: 1000, resetAfterMs: 5000 });
  assert.equal(backoff.onExit(10), 0);
  assert.equal(backoff.onExit(10), 100);
  assert.equal(backoff.onExit(10), 200);
  assert.equal(backoff.onExit(6000), 0);
  assert.equal(backoff.consecutiveFailures, 1);
  assert.equal(shouldRestart(undefined, 0), true);
  assert.equal(shouldRestart('OnFailure', 0), false);
  assert.equal(shouldRestart('OnFailure', 137), true);
  assert.equal(shouldRestart('Never', 1), false);
});

test('address pool: pods from .2 upwards, services from .254 downwards, freed addresses reused', () => {
  const pool = new AddressPool('127.0.9');
  assert.equal(pool.allocate('low'), '127.0.9.2');
  assert.equal(pool.allocate('low'), '127.0.9.3');
  assert.equal(pool.allocate('high'), '127.0.9.254');
  assert.equal(pool.reserve('127.0.9.4'), true);
  assert.equal(pool.reserve('127.0.9.4'), false);
  assert.equal(pool.reserve('10.0.0.1'), false);
  assert.equal(pool.allocate('low'), '127.0.9.5');
  pool.release('127.0.9.2');
  assert.equal(pool.allocate('low'), '127.0.9.2');
  assert.throws(() => new AddressPool('10.0.0'), /127\.X\.Y/);
  const tiny = new AddressPool('127.0.9', 2, 3);
  tiny.allocate();
  tiny.allocate();
  assert.throws(() => tiny.allocate(), /exhausted/);
});

test('untraversableAncestor names the folder that keeps a non-root account out', async () => {
  const { mkdtemp, mkdir, chmod, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { untraversableAncestor, lookupUser } = await import('../../../local/node/run.js');
  const base = await mkdtemp(join(tmpdir(), 'keelson-traverse-'));
  try {
    await mkdir(join(base, 'a', 'node'), { recursive: true });
    await chmod(base, 0o700);
    assert.equal(untraversableAncestor(join(base, 'a', 'node')), base);
    await chmod(base, 0o755);
    assert.equal(untraversableAncestor(join(base, 'a', 'node')), undefined);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  assert.equal(lookupUser('no-such-account-here'), undefined);
  assert.equal(lookupUser('root')?.uid, 0);
});
