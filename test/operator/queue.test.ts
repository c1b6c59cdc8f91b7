import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from '../../operator/queue.js';
import { parseWatchNamespaces } from '../../operator/main.js';

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
    assert.deepEqual([1, 2, 3, 4, 5].map(() => queue.addRateLimited('db/a')), [100, 200, 400, 800, 1000]);
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

  it('reads WATCH_NAMESPACE as one, several or all', () => {
    assert.deepEqual(parseWatchNamespaces(undefined), []);
    assert.deepEqual(parseWatchNamespaces('*'), []);
    assert.deepEqual(parseWatchNamespaces('a'), ['a']);
    assert.deepEqual(parseWatchNamespaces(' a, b ,'), ['a', 'b']);
  });
});
