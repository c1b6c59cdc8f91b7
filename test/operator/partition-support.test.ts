import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { committedSince, splitBrainInstants, writablePeriods, type Sample } from './partition-support.js';

const s = (member: string, at: number, ok: boolean): Sample => ({ member, startedAt: at, endedAt: at + 5, ok });

describe('partition observers', () => {
  it('joins consecutive commits of a member into periods, broken by a failure', () => {
    const periods = writablePeriods([s('a', 0, true), s('a', 50, true), s('a', 100, false), s('a', 150, true)]);
    assert.deepEqual(periods, [
      { member: 'a', from: 0, to: 55 },
      { member: 'a', from: 150, to: 155 },
    ]);
  });

  it('finds no split brain in a clean handover and one when both members take writes', () => {
    const handover = [s('a', 0, true), s('b', 0, false), s('a', 50, false), s('b', 60, true), s('a', 100, false), s('b', 110, true)];
    assert.deepEqual(splitBrainInstants(handover), []);
    const both = [...handover, s('a', 120, true), s('b', 160, true), s('a', 170, true)];
    const found = splitBrainInstants(both);
    assert.equal(found.length, 1);
    assert.deepEqual(found[0].members, ['b', 'a']);
    assert.equal(found[0].from, 120);
  });

  it('names the members that committed after a moment', () => {
    assert.deepEqual(committedSince([s('a', 0, true), s('b', 10, true), s('c', 20, false)], 5, 'a'), ['b']);
  });
});
