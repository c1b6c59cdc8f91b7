import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from '../../operator/queue.js';
import { parseWatchNamespaces } from '../../operator/main.js';
import { eventPriority } from '../../operator/controller.js';

describe('work queue', () => {
  it('deduplicates keys and re-queues a key that changed while being processed', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ onDepthChange: (d) => depths.push(d) });
    queue.add('db/a');
    queue.add('db/a');
    queue.add('db/b');
    assert.equal(queue.depth, 2);
    const first = await queue.get();
    assert.equal(first, 'db/a');
    queue.add('db/a'); // dirty while processing: not handed to a second worker
    assert.equal(await queue.get(), 'db/b');
    assert.equal(queue.depth, 0);
    queue.done('db/a');
    assert.equal(queue.depth, 1);
    assert.equal(await queue.get(), 'db/a');
    queue.shutDown();
    assert.ok(depths.length > 0);
  });

  it('backs off exponentially per key and forgets on success', () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => queue.addRateLimited('db/a')),
      [100, 200, 400, 800, 1000],
    );
    queue.forget('db/a');
    assert.equal(queue.addRateLimited('db/a'), 100);
    queue.shutDown();
  });

  it('delivers delayed keys and wakes a waiting worker', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.addAfter('db/c', 20);
    assert.equal(await waiting, 'db/c');
    queue.shutDown();
    assert.equal(await queue.get(), undefined);
  });

  it('serves user changes before owned-object events before resyncs, and moves a queued key up', async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 50; i += 1) queue.add(`db/resync-${i}`, 'low');
    queue.add('db/pod-event');
    queue.add('db/resync-7', 'high'); // already queued low: moves up, not duplicated
    queue.add('db/spec-change', 'high');
    queue.add('db/spec-change', 'low'); // a lower add does not move it down
    assert.equal(queue.depth, 52);
    assert.deepEqual(
      [await queue.get(), await queue.get(), await queue.get(), await queue.get()],
      ['db/resync-7', 'db/spec-change', 'db/pod-event', 'db/resync-0'],
    );
    const rest: string[] = [];
    while (queue.depth > 0) rest.push((await queue.get())!);
    assert.equal(rest.length, 48);
    assert.ok(!rest.includes('db/resync-7'), 'a key moved up is not served twice');
    queue.shutDown();
  });

  it('re-queues a key changed while processing at the priority of that change', async () => {
    const queue = new WorkQueue();
    queue.add('db/a', 'low');
    assert.equal(await queue.get(), 'db/a');
    queue.add('db/a', 'low');
    queue.add('db/a', 'high');
    queue.add('db/b', 'normal');
    queue.done('db/a');
    assert.equal(await queue.get(), 'db/a');
    assert.equal(await queue.get(), 'db/b');
    queue.shutDown();
  });

  it('backs off a converging key from its floor, doubling to the cap, until it settles', () => {
    const queue = new WorkQueue({ maxConvergingDelayMs: 60_000 });
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map(() => queue.addConverging('db/a', 5_000)),
      [5_000, 10_000, 20_000, 40_000, 60_000, 60_000],
    );
    assert.equal(queue.addConverging('db/b', 5_000), 5_000, 'per key');
    queue.settled('db/a');
    assert.equal(queue.addConverging('db/a', 5_000), 5_000);
    queue.shutDown();
  });

  it('a converging pass that took a step starts the back-off over; one that waited keeps doubling', () => {
    const queue = new WorkQueue({ maxConvergingDelayMs: 60_000 });
    const waited = { requeueAfterMs: 5_000, converging: true };
    assert.deepEqual(
      [1, 2, 3].map(() => queue.requeueAfterPass('db/a', waited)),
      [5_000, 10_000, 20_000],
    );
    assert.equal(
      queue.requeueAfterPass('db/a', { requeueAfterMs: 1_000, converging: true, progressed: true }),
      1_000,
      'a member restarted: look again in a second',
    );
    assert.equal(queue.requeueAfterPass('db/a', waited), 10_000, 'the doubling goes on from the step, not from before it');
    assert.equal(queue.requeueAfterPass('db/a', {}), undefined);
    assert.equal(queue.requeueAfterPass('db/a', waited), 5_000, 'a settled key starts from its floor');
    queue.shutDown();
  });

  it('keeps the earliest of two delayed adds of a key', async () => {
    const queue = new WorkQueue();
    queue.addAfter('db/a', 60_000);
    queue.addAfter('db/a', 10);
    const started = Date.now();
    assert.equal(await queue.get(), 'db/a');
    assert.ok(Date.now() - started < 30_000);
    queue.shutDown();
  });

  it('spreads retries of many failing keys at the overall rate once the burst is spent', () => {
    let now = 1_000;
    const queue = new WorkQueue({ baseDelayMs: 1, retriesPerSecond: 10, retryBurst: 5, clock: () => now });
    const delays = Array.from({ length: 8 }, (_, i) => queue.addRateLimited(`db/k${i}`));
    assert.deepEqual(delays.map(Math.round), [1, 1, 1, 1, 1, 100, 200, 300], 'the burst at the per-key delay, then one per 100 ms');
    now += 1_000; // the debt (3 tokens) is paid off and 7 more earned, capped at the burst
    assert.deepEqual(
      Array.from({ length: 6 }, (_, i) => Math.round(queue.addRateLimited(`db/later${i}`))),
      [1, 1, 1, 1, 1, 100],
    );
    queue.shutDown();
  });

  it('ranks a DatabaseCluster spec change or deletion above status writes and owned objects', () => {
    const cluster = (generation: number, deleting = false) => ({
      apiVersion: 'keelson.io/v1',
      kind: 'DatabaseCluster',
      metadata: { name: 'a', generation, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
    });
    assert.equal(eventPriority(cluster(2), cluster(1)), 'high');
    assert.equal(eventPriority(cluster(1, true), cluster(1)), 'high');
    assert.equal(eventPriority(cluster(1), cluster(1)), 'normal', 'a status write');
    assert.equal(eventPriority(cluster(1), undefined), 'normal', 'listed at start');
    assert.equal(
      eventPriority({ apiVersion: 'v1', kind: 'Pod', metadata: { generation: 2 } }, { apiVersion: 'v1', kind: 'Pod', metadata: { generation: 1 } }),
      'normal',
    );
  });

  it('reads WATCH_NAMESPACE as one, several or all', () => {
    assert.deepEqual(parseWatchNamespaces(undefined), []);
    assert.deepEqual(parseWatchNamespaces('*'), []);
    assert.deepEqual(parseWatchNamespaces('a'), ['a']);
    assert.deepEqual(parseWatchNamespaces(' a, b ,'), ['a', 'b']);
  });
});
