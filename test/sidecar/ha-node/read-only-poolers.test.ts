import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberRecord } from '../../../sidecar/ha-node/dcs/types.js';
import { readableReplicas, readOnlyMoves, type Endpoint } from '../../../sidecar/ha-node/ha/poolers/read-only-poolers.js';

/** Which replica each read-only pooler is pointed at: streaming, fresh, within the lag bound, spread evenly, the primary when none. */
const now = 1_000_000;
function member(name: string, host: string, overrides: Partial<MemberRecord> = {}): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: '',
    host,
    port: 5432,
    role: 'replica',
    state: 'streaming',
    replication_state: 'streaming',
    xlog_location: 1000,
    tags: {},
    version: 'test',
    heartbeat: now,
    ...overrides,
  };
}
const view = (members: MemberRecord[]) => ({ members, leaderName: 'a', primaryLocation: 1500, maxLagBytes: 1000, freshSince: now - 10_000 });
const primary: Endpoint = { host: '127.0.0.1', port: 5432 };
const at = (host: string): Endpoint => ({ host, port: 5432 });

describe('read-only pooler targets', () => {
  it('take only streaming, recently heard, not lagging replicas that serve reads', () => {
    const members = [
      member('a', '127.0.0.1', { role: 'primary', replication_state: undefined }),
      member('b', '127.0.0.2'),
      member('c', '127.0.0.3', { replication_state: 'catchup' }),
      member('d', '127.0.0.4', { heartbeat: now - 20_000 }),
      member('e', '127.0.0.5', { xlog_location: 100 }),
      member('f', '127.0.0.6', { tags: { noloadbalance: true } }),
      member('g', '127.0.0.7', { role: 'uninitialized' }),
      member('h', '127.0.0.8', { xlog_location: 600 }),
    ];
    assert.deepEqual(readableReplicas(view(members)), [at('127.0.0.2'), at('127.0.0.8')]);
  });

  it('spread the poolers across the replicas, moving only those that must move', () => {
    const replicas = [at('127.0.0.2'), at('127.0.0.3')];
    // Both on the primary (as after a start): one to each replica.
    const moves = readOnlyMoves(
      new Map([
        ['p1', primary],
        ['p2', primary],
      ]),
      replicas,
      primary,
    );
    assert.deepEqual([...moves.values()].map((e) => e.host).sort(), ['127.0.0.2', '127.0.0.3']);
    // Already spread: nothing to do.
    assert.equal(
      readOnlyMoves(
        new Map([
          ['p1', at('127.0.0.3')],
          ['p2', at('127.0.0.2')],
        ]),
        replicas,
        primary,
      ).size,
      0,
    );
    // Both on one replica: one stays, the other goes to the idle one.
    assert.deepEqual(
      [
        ...readOnlyMoves(
          new Map([
            ['p1', at('127.0.0.2')],
            ['p2', at('127.0.0.2')],
          ]),
          replicas,
          primary,
        ),
      ],
      [['p2', at('127.0.0.3')]],
    );
    // A pooler on a member that is no longer a readable replica (promoted, gone) moves.
    assert.deepEqual([...readOnlyMoves(new Map([['p1', at('127.0.0.9')]]), replicas, primary)], [['p1', at('127.0.0.2')]]);
    // A pooler that did not answer is left alone.
    assert.equal(readOnlyMoves(new Map([['p1', undefined]]), replicas, primary).size, 0);
  });

  it('fall back to the primary when no replica streams', () => {
    assert.deepEqual(
      [
        ...readOnlyMoves(
          new Map([
            ['p1', at('127.0.0.2')],
            ['p2', primary],
          ]),
          [],
          primary,
        ),
      ],
      [['p1', primary]],
    );
  });
});
