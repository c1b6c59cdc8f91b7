import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronPattern, lastDue, parseCron } from '../../lib/cron.js';

describe('cron schedules', () => {
  const due = (expression: string, at: string): string | undefined => lastDue(parseCron(expression), new Date(at))?.toISOString();

  it('finds the latest due minute at or before a moment (UTC)', () => {
    assert.equal(due('0 2 * * *', '2026-03-10T05:00:00Z'), '2026-03-10T02:00:00.000Z');
    assert.equal(due('0 2 * * *', '2026-03-10T01:59:59Z'), '2026-03-09T02:00:00.000Z');
    assert.equal(due('*/15 * * * *', '2026-03-10T05:44:10Z'), '2026-03-10T05:30:00.000Z');
    assert.equal(due('30 1 * * 0', '2026-03-10T00:00:00Z'), '2026-03-08T01:30:00.000Z', 'Sunday');
    assert.equal(due('0 0 1 * *', '2026-03-10T00:00:00Z'), '2026-03-01T00:00:00.000Z');
    assert.equal(due('0 0 * * 7', '2026-03-10T00:00:00Z'), '2026-03-08T00:00:00.000Z', '7 is Sunday too');
    assert.equal(due('0 0 13 * 5', '2026-03-10T00:00:00Z'), '2026-03-06T00:00:00.000Z', 'day-of-month or weekday when both are set');
    assert.equal(due('0 0 30 2 *', '2026-03-10T00:00:00Z'), undefined, 'never due');
  });

  it('refuses what is not a five-field schedule or out of range, in the parser and in the CRD pattern', () => {
    for (const bad of [
      '',
      '* * * *',
      '60 * * * *',
      '* 24 * * *',
      '* * 0 * *',
      '* * * 13 *',
      '* * * * 8',
      '@daily',
      '*/0 * * * *',
      '5-1 * * * *',
      '* * * * * *',
    ]) {
      assert.throws(() => parseCron(bad), /cron/, bad);
      if (!/5-1/.test(bad)) assert.doesNotMatch(bad, new RegExp(cronPattern), bad);
    }
    for (const good of ['0 2 * * *', '*/5 * * * *', '0,30 8-18 * * 1-5', '15 3 1 */2 *']) {
      assert.match(good, new RegExp(cronPattern));
      assert.doesNotThrow(() => parseCron(good));
    }
  });
});
