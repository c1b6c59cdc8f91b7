import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replicationTimeoutParameters, repliesInTime, replySilenceBoundMs, serverParameters } from '../../../sidecar/ha-node/ha/sync/standby-replies.js';

describe('standby replies and replication timeouts', () => {
  it('ties the timeouts to ttl, never above PostgreSQL defaults, and lets configured values win', () => {
    assert.deepEqual(replicationTimeoutParameters({ ttl: 30, loop_wait: 10 }), {
      wal_sender_timeout: '30000ms',
      wal_receiver_timeout: '30000ms',
      wal_receiver_status_interval: '10s',
    });
    assert.deepEqual(replicationTimeoutParameters({ ttl: 120, loop_wait: 20 }).wal_sender_timeout, '60000ms');
    assert.deepEqual(replicationTimeoutParameters({ ttl: 2, loop_wait: 1 }).wal_sender_timeout, '4000ms', 'at least two replies fit in the timeout');
    const params = serverParameters({ ttl: 10, loop_wait: 2, parameters: { wal_sender_timeout: '60s', work_mem: '8MB' } });
    assert.deepEqual(params, { wal_sender_timeout: '60s', wal_receiver_timeout: '10000ms', wal_receiver_status_interval: '2s', work_mem: '8MB' });
  });

  it('counts a standby as streaming only while it replies within the bound', () => {
    const bound = replySilenceBoundMs({ ttl: 10, loop_wait: 2 });
    assert.equal(bound, 6000);
    assert.equal(replySilenceBoundMs({ ttl: 30, loop_wait: 10 }), 22_000);
    assert.equal(repliesInTime({ state: 'streaming', reply_age_ms: 500 }, bound), true);
    assert.equal(repliesInTime({ state: 'streaming', reply_age_ms: 6500 }, bound), false);
    assert.equal(repliesInTime({ state: 'catchup', reply_age_ms: 10 }, bound), false);
    assert.equal(repliesInTime({ state: 'streaming', reply_age_ms: null }, bound), true, 'no reply yet: judged by presence');
  });
});
