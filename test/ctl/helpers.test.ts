import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromYaml, lineDiff, patchBetween, patchFromSets, toYaml } from '../../ctl/config-edit.js';
import { apiBase } from '../../ctl/client.js';
import { parseFormat, renderHistory, renderList, renderTopology } from '../../ctl/render.js';
import { mergePatch } from '../../sidecar/ha-node/ops/config-merge.js';

describe('edit-config helpers', () => {
  it('--set builds nested patches with YAML values; null or empty removes', () => {
    assert.deepEqual(patchFromSets(['ttl=40', 'db.parameters.work_mem=8MB', 'db.use_slots=false', 'pause=null', 'loop_wait=']), {
      ttl: 40,
      db: { parameters: { work_mem: '8MB' }, use_slots: false },
      pause: null,
      loop_wait: null,
    });
    assert.throws(() => patchFromSets(['novalue']), /expected key=value/);
    assert.throws(() => patchFromSets(['a..b=1']), /empty key segment/);
  });
  it('--set and an edited document refuse prototype keys and numbers JSON cannot carry, and pollute nothing', () => {
    for (const [set, key] of [
      ['__proto__.polluted=1', '__proto__'],
      ['db.constructor.prototype.polluted=1', 'constructor'],
      ['slots.prototype=1', 'prototype'],
    ] as const) {
      assert.throws(() => patchFromSets([set]), new RegExp(`--set ${set.replace(/[.]/g, '\\.')}: key "${key}" is not allowed`));
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');
    // YAML's .inf would travel as null and so remove the key instead of setting it.
    assert.throws(() => patchFromSets(['ttl=.inf']), /--set ttl=\.inf: the value itself is not a finite number/);
    assert.throws(() => patchFromSets(['ttl=1e309']), /not a finite number/);
    assert.throws(() => fromYaml('db:\n  __proto__:\n    polluted: 1\n'), /key "__proto__" is not allowed \(at "db"\)/);
    assert.throws(() => fromYaml('ttl: .nan\n'), /"ttl" is not a finite number/);
    assert.deepEqual(
      patchFromSets(['db.parameters.toString=on']),
      { db: { parameters: { toString: 'on' } } },
      'an ordinary key named like an Object method is data',
    );
  });
  it('patchBetween is the PATCH that turns one document into the other', () => {
    const before = { ttl: 30, loop_wait: 10, db: { parameters: { a: 1, b: 2 }, use_slots: true } };
    const after = { ttl: 40, db: { parameters: { a: 1, c: 3 }, use_slots: true }, pause: true };
    const patch = patchBetween(before, after);
    assert.deepEqual(patch, { loop_wait: null, ttl: 40, db: { parameters: { b: null, c: 3 } }, pause: true });
    assert.deepEqual(JSON.parse(JSON.stringify(mergePatch(before, patch))), after, 'the merge gives the edited document');
    assert.deepEqual(patchBetween(before, before), {});
  });
  it('YAML round trip and a readable line diff', () => {
    const doc = { ttl: 30, db: { parameters: { max_connections: 100 } } };
    assert.deepEqual(fromYaml(toYaml(doc)), doc);
    assert.deepEqual(fromYaml(''), {});
    assert.throws(() => fromYaml('- a\n- b\n'), /YAML mapping/);
    const diff = lineDiff(toYaml(doc), toYaml({ ...doc, ttl: 40 }));
    assert.match(diff, /^-ttl: 30$/m);
    assert.match(diff, /^\+ttl: 40$/m);
    assert.match(diff, /^ {3}parameters:$/m);
  });
});

describe('ctl rendering', () => {
  const cluster = {
    scope: 'demo',
    members: [
      {
        name: 'demo-1',
        role: 'replica',
        state: 'streaming',
        api_url: 'http://10.0.0.2:8008/ha',
        host: '10.0.0.2',
        port: 5432,
        timeline: 2,
        lag: 3 * 1048576,
        pending_restart: true,
      },
      {
        name: 'demo-0',
        role: 'leader',
        state: 'running',
        api_url: 'http://10.0.0.1:8008/ha',
        host: '10.0.0.1',
        port: 5432,
        timeline: 2,
        tags: { nofailover: true },
      },
    ],
    scheduled_switchover: { at: '2026-11-22T11:00:00+00:00', from: 'demo-0', to: 'demo-1' },
  };
  it('list: sorted rows with role, lag in MB, pending restart and tags, plus the schedule', () => {
    const text = renderList(cluster, 'demo');
    const rows = text.split('\n').filter((l) => l.startsWith('| demo'));
    assert.match(rows[0]!, /^\| demo-0 +\| 10\.0\.0\.1:5432 \| Leader +\| running +\| 2 +\| +\| +\| nofailover: true \|$/);
    assert.match(rows[1]!, /^\| demo-1 +\| 10\.0\.0\.2:5432 \| Replica +\| streaming \| 2 +\| 3 +\| \* +\| +\|$/);
    assert.match(text, /Switchover scheduled at: 2026-11-22T11:00:00\+00:00/);
  });
  it("list --extended shows each member's volume use, and a footer names a nearly full one", () => {
    const mi = 1048576;
    const withVolumes = {
      ...cluster,
      members: [
        { ...cluster.members[0]!, volumes: [{ volume: 'data' as const, capacity_bytes: 64 * mi, used_bytes: 60 * mi, free_bytes: 4 * mi }] },
        {
          ...cluster.members[1]!,
          volumes: [
            { volume: 'data' as const, capacity_bytes: 1024 * mi, used_bytes: 102 * mi, free_bytes: 922 * mi },
            { volume: 'wal' as const, capacity_bytes: 64 * mi, used_bytes: 64 * mi, free_bytes: 0, full: true as const },
          ],
        },
      ],
    };
    const extended = renderList(withVolumes, 'demo', new Map());
    assert.match(extended, /\| Disk used +\|/);
    assert.match(extended, /\| data 94% of 64 MiB +\|$/m);
    assert.match(extended, /\| data 10% of 1024 MiB, wal 100% of 64 MiB \|$/m);
    const plain = renderList(withVolumes, 'demo');
    assert.match(plain, /^ Volume nearly full on demo-1: data 94% of 64 MiB$/m);
    assert.match(plain, /^ Volume full on demo-0: wal 100% of 64 MiB$/m);
    assert.doesNotMatch(renderList(cluster, 'demo'), /Volume/);
  });
  it('topology indents members under the leader; history table; formats; api bases', () => {
    const rows = renderTopology(cluster, 'demo')
      .split('\n')
      .filter((l) => l.startsWith('| '));
    assert.match(rows[1]!, /^\| demo-0 /);
    assert.match(rows[2]!, /^\| \+ demo-1 /);
    assert.match(
      renderHistory([[1, 83902552, 'no recovery target specified', '2026-11-22T10:30:15+00:00']]),
      /\| 1 +\| 83902552 \| no recovery target specified \|/,
    );
    assert.equal(parseFormat(undefined), 'table');
    assert.equal(parseFormat('YAML'), 'yaml');
    assert.throws(() => parseFormat('xml'), /unknown output format/);
    assert.equal(apiBase('http://10.0.0.1:8008/ha'), 'http://10.0.0.1:8008');
    assert.equal(apiBase('https://[fd00::1]:8008/ha'), 'https://[fd00::1]:8008');
  });
});
