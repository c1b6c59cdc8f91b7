import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { descendantsOf, parseProcStat } from '../../../sidecar/ha-node/fence/kill-server.js';
import { effectiveHangTimeout, hangTakeoverBoundMs, hangVerdict, nextPrimaryAnswer, probeOutcome } from '../../../sidecar/ha-node/ha/watches/hang-rules.js';
import { defaultConfig, effectiveConfig } from '../../../sidecar/ha-node/ha/settings.js';
import { validateDynamicConfig } from '../../../sidecar/ha-node/ops/config-validate.js';
import type { ServerStatus } from '../../../sidecar/ha-node/postgres/status.js';

/** The pure rules of hung-primary detection and fencing. */

const status = { inRecovery: false } as ServerStatus;

describe('hung primary rules', () => {
  it('counts an error PostgreSQL sent as an answer and a timeout as silence', () => {
    assert.equal(probeOutcome(status, undefined), 'answered');
    const refused = new pg.DatabaseError('the database system is starting up', 0, 'error');
    assert.equal(probeOutcome(undefined, refused), 'refused');
    assert.equal(probeOutcome(undefined, new Error('timeout expired')), 'silent');
    assert.equal(probeOutcome(undefined, Object.assign(new Error('connect EAGAIN'), { code: 'EAGAIN' })), 'silent');
  });

  it('remembers the last answer as primary of the same postmaster only', () => {
    assert.deepEqual(nextPrimaryAnswer(undefined, 100, 'answered', true, 5), { pid: 100, at: 5 });
    assert.equal(nextPrimaryAnswer(undefined, 100, 'answered', false, 5), undefined, 'a replica answer is no primary answer');
    const last = { pid: 100, at: 5 };
    assert.equal(nextPrimaryAnswer(last, 100, 'silent', true, 9), last, 'silence keeps the old answer time');
    assert.deepEqual(nextPrimaryAnswer(last, 100, 'refused', false, 9), { pid: 100, at: 9 }, 'an error answer shows the postmaster alive');
    assert.equal(nextPrimaryAnswer(last, 200, 'silent', false, 9), undefined, 'a restarted postmaster starts afresh');
    assert.equal(nextPrimaryAnswer(last, 200, 'refused', false, 9), undefined);
    assert.equal(nextPrimaryAnswer(last, undefined, 'silent', false, 9), undefined, 'no postmaster, nothing to judge');
  });

  it('judges starting, waiting and hung', () => {
    const last = { pid: 100, at: 1000 };
    assert.deepEqual(hangVerdict(undefined, 100, 50_000, 30), { kind: 'starting' });
    assert.deepEqual(hangVerdict(last, 200, 50_000, 30), { kind: 'starting' }, 'a postmaster that never answered is starting');
    assert.deepEqual(hangVerdict(last, 100, 50_000, 0), { kind: 'starting' }, '0 disables');
    assert.deepEqual(hangVerdict(last, 100, 30_999, 30), { kind: 'waiting', silentSeconds: 29.999 });
    assert.deepEqual(hangVerdict(last, 100, 31_000, 30), { kind: 'hung', silentSeconds: 30 });
  });

  it('shortens the hang timeout so the fence and the release come within ttl, never below the minimum', () => {
    // ttl − (2 s fence + max(1 s, retry_timeout/2) release + 1 s heartbeat + 1 s cycle).
    assert.equal(effectiveHangTimeout({ primary_hang_timeout: 30, ttl: 30, retry_timeout: 10 }), 21, 'the defaults');
    assert.equal(effectiveHangTimeout({ primary_hang_timeout: 30, ttl: 10, retry_timeout: 4 }), 5, 'ttl 10 gives the minimum');
    assert.equal(effectiveHangTimeout({ primary_hang_timeout: 5, ttl: 8, retry_timeout: 3 }), 5, 'never below the minimum');
    assert.equal(effectiveHangTimeout({ primary_hang_timeout: 30, ttl: 60, retry_timeout: 10 }), 30, 'a long ttl keeps the setting');
    assert.equal(effectiveHangTimeout({ primary_hang_timeout: 0, ttl: 30, retry_timeout: 10 }), 0, '0 stays never');
  });

  it('documents the takeover bound from its parts', () => {
    // timeout + 1 s heartbeat + 1 s cycle + 2 s fence + max(1 s, retry_timeout/2) release + 4 s race and promotion.
    assert.equal(hangTakeoverBoundMs({ primary_hang_timeout: 30, ttl: 30, retry_timeout: 10 }), 34_000);
    assert.equal(hangTakeoverBoundMs({ primary_hang_timeout: 30, ttl: 10, retry_timeout: 4 }), 15_000);
  });

  it('reads /proc stat lines whose command holds spaces and parentheses', () => {
    assert.deepEqual(parseProcStat('4242 (postgres: walwriter ) S 4200 4242 4242 0 -1'), { state: 'S', ppid: 4200 });
    assert.deepEqual(parseProcStat('77 (a) b)) T 1 77'), { state: 'T', ppid: 1 });
    assert.equal(parseProcStat('garbage'), undefined);
  });

  it('finds every descendant of the postmaster and nothing else', () => {
    const parents = new Map([
      [10, 1],
      [11, 10],
      [12, 10],
      [13, 12],
      [20, 1],
      [21, 20],
    ]);
    assert.deepEqual(descendantsOf(10, parents).sort(), [11, 12, 13]);
    assert.deepEqual(descendantsOf(99, parents), []);
  });

  it('takes primary_hang_timeout from the dynamic configuration and validates its bounds', () => {
    assert.equal(defaultConfig.primary_hang_timeout, 30);
    assert.equal(effectiveConfig(defaultConfig, { primary_hang_timeout: 12 }).primary_hang_timeout, 12);
    assert.equal(effectiveConfig(defaultConfig, { primary_hang_timeout: 'x' as unknown as number }).primary_hang_timeout, 30, 'a bad DCS value keeps the base');
    assert.deepEqual(validateDynamicConfig({ primary_hang_timeout: 0 }), []);
    assert.deepEqual(validateDynamicConfig({ primary_hang_timeout: 45 }), []);
    for (const bad of [2, 3601, -1, '30', true]) {
      const problems = validateDynamicConfig({ primary_hang_timeout: bad });
      assert.equal(problems[0]?.field, 'primary_hang_timeout', `rejects ${JSON.stringify(bad)}`);
    }
  });
});
