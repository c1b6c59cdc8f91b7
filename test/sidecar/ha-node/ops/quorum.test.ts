import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextQuorumStep, pgHalf, quorumSafe, type QuorumState } from '../../../../sidecar/ha-node/ha/sync/quorum-plan.js';
import { quorumVerdict } from '../../../../sidecar/ha-node/ops/quorum-race.js';
import type { PeerReport } from '../../../../sidecar/ha-node/ha/election/election.js';

/** Applies steps until none is left, checking the invariant after every single step. */
function converge(
  start: { names: string; key?: { voters: string[]; quorum: number } },
  active: string[],
  nodeCount: number,
  strict = false,
): { names: string; key: { voters: string[]; quorum: number }; steps: string[] } {
  let names = start.names;
  let key = start.key;
  const steps: string[] = [];
  for (let i = 0; i < 10; i += 1) {
    const step = nextQuorumStep({ currentNames: names, key, active, nodeCount, strict });
    if (step.kind === 'none') return { names, key: key!, steps };
    if (step.kind === 'dcs') key = { voters: step.voters, quorum: step.quorum };
    else names = step.names;
    steps.push(step.kind);
    const state: QuorumState = { ...pgHalf(names), voters: key?.voters ?? [], quorum: key?.quorum ?? 0 };
    assert.ok(quorumSafe(state), `unsafe after step ${i + 1} (${step.kind}) towards [${active.join(',')}]: ${JSON.stringify(state)}`);
  }
  throw new Error(`no convergence towards [${active.join(',')}]`);
}

describe('quorum commit planning', () => {
  it('the invariant: every ack set meets every set of quorum + 1 voters', () => {
    assert.equal(quorumSafe({ numsync: 1, sync: ['b', 'c'], voters: ['b', 'c'], quorum: 1 }), true);
    assert.equal(quorumSafe({ numsync: 1, sync: ['b', 'c'], voters: ['b', 'c'], quorum: 0 }), false, 'one ack, one vote: they may miss each other');
    assert.equal(quorumSafe({ numsync: 1, sync: ['b', 'c', 'd'], voters: ['b', 'c'], quorum: 1 }), false, 'the ack may come from d, no voter');
    assert.equal(quorumSafe({ numsync: 0, sync: [], voters: [], quorum: 0 }), true, 'no voters: only the former leader may win');
    assert.equal(quorumSafe({ numsync: 0, sync: [], voters: ['b'], quorum: 1 }), true, 'lock-out quorum: nobody can gather the votes');
  });

  it('starts with an empty key of its own, then reaches ANY k over the streaming members', () => {
    const done = converge({ names: '' }, ['b', 'c'], 1);
    assert.equal(done.names, 'ANY 1 ("b","c")');
    assert.deepEqual(done.key, { voters: ['b', 'c'], quorum: 1 });
    assert.equal(done.steps[0], 'dcs', 'the key is taken over first');
    const two = converge({ names: done.names, key: done.key }, ['b', 'c'], 2);
    assert.equal(two.names, 'ANY 2 ("b","c")');
    assert.deepEqual(two.key, { voters: ['b', 'c'], quorum: 0 });
    assert.deepEqual(two.steps, ['names', 'dcs'], 'a higher numsync goes to PostgreSQL before the quorum drops');
  });

  it('adding a member raises the quorum in the DCS first; removing one changes PostgreSQL first', () => {
    const start = { names: 'ANY 1 ("b","c")', key: { voters: ['b', 'c'], quorum: 1 } };
    const added = converge(start, ['b', 'c', 'd'], 1);
    assert.deepEqual(added.steps, ['dcs', 'names']);
    assert.deepEqual(added.key, { voters: ['b', 'c', 'd'], quorum: 2 });
    assert.equal(added.names, 'ANY 1 ("b","c","d")');
    const removed = converge({ names: added.names, key: added.key }, ['b', 'd'], 1);
    assert.deepEqual(removed.steps, ['names', 'dcs']);
    assert.deepEqual(removed.key, { voters: ['b', 'd'], quorum: 1 });
  });

  it('stays safe on every path between random member sets, node counts and strict mode', () => {
    const pool = ['a', 'b', 'c', 'd', 'e'];
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let state = { names: '', key: undefined as { voters: string[]; quorum: number } | undefined };
    for (let round = 0; round < 300; round += 1) {
      const active = pool.filter(() => random() < 0.6);
      const done = converge(state, active, 1 + Math.floor(random() * 3), random() < 0.3);
      state = { names: done.names, key: done.key };
      assert.deepEqual([...done.key.voters].sort(), active, `round ${round}: voters follow the streaming members`);
    }
  });

  it('strict mode without standbys keeps a placeholder so commits wait', () => {
    const done = converge({ names: 'ANY 1 ("b")', key: { voters: ['b'], quorum: 0 } }, [], 1, true);
    assert.match(done.names, /^ANY 1 \("__keelson_strict_sync_placeholder__"\)$/);
    assert.deepEqual(done.key, { voters: [], quorum: 0 });
  });
});

describe('quorum proof in the race', () => {
  const peer = (name: string, walPosition: number, reachable = true): PeerReport => ({ name, reachable, walPosition, role: 'replica', state: 'running' });
  const sync = { leader: 'a', sync_standby: ['b', 'c', 'd'], quorum: 2 };

  it('needs quorum + 1 voters (itself included) and none of them ahead', () => {
    assert.deepEqual(quorumVerdict({ name: 'b', walPosition: 100 }, sync, [peer('c', 100), peer('d', 90)]), { ok: true });
    assert.deepEqual(quorumVerdict({ name: 'b', walPosition: 100 }, sync, [peer('c', 100), peer('d', 90, false)]), {
      ok: false,
      reason: 'quorum not reached: sees 2 of the 3 voters needed',
    });
    assert.deepEqual(quorumVerdict({ name: 'b', walPosition: 100 }, sync, [peer('c', 120), peer('d', 90)]), {
      ok: false,
      reason: 'voter c is ahead (120 > 100)',
    });
    assert.deepEqual(
      quorumVerdict({ name: 'e', walPosition: 100 }, sync, [peer('b', 100), peer('c', 100)]),
      { ok: false, reason: 'quorum not reached: sees 2 of the 3 voters needed' },
      'a non-voter needs three voters besides itself',
    );
  });

  it('the former leader and clusters outside quorum mode always pass', () => {
    assert.deepEqual(quorumVerdict({ name: 'a', walPosition: 1 }, sync, []), { ok: true });
    assert.deepEqual(quorumVerdict({ name: 'b', walPosition: 1 }, { leader: 'a', sync_standby: ['b'] }, []), { ok: true });
    assert.deepEqual(quorumVerdict({ name: 'b', walPosition: 1 }, undefined, []), { ok: true });
  });
});
