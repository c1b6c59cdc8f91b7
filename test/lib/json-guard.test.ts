import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findUnsafeJson, jsonTextDepth, maxJsonDepth, parseGuardedJson } from '../../lib/json-guard.js';

const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('JSON guard', () => {
  it('measures nesting on the text, ignoring brackets inside strings', () => {
    assert.equal(jsonTextDepth('{"a":[1,{"b":2}]}'), 3);
    assert.equal(jsonTextDepth('{"a":"[[[{{{\\"]]]"}'), 1);
    assert.equal(jsonTextDepth('1'), 0);
    assert.equal(jsonTextDepth(nested(20_000), maxJsonDepth), maxJsonDepth + 1, 'stops counting past the limit');
  });
  it('accepts nesting up to the bound and refuses one level more, before parsing', () => {
    assert.equal(parseGuardedJson(nested(maxJsonDepth)).ok, true);
    assert.deepEqual(parseGuardedJson(nested(maxJsonDepth + 1)), { ok: false, problem: `the body is nested deeper than ${maxJsonDepth} levels` });
    assert.equal(parseGuardedJson(nested(20_000)).ok, false);
  });
  it('names prototype keys and non-finite numbers with their path', () => {
    assert.deepEqual(parseGuardedJson('{"__proto__":{"polluted":1}}'), { ok: false, problem: 'key "__proto__" is not allowed (at the top level)' });
    assert.equal(findUnsafeJson(JSON.parse('{"db":{"parameters":{"constructor":{"prototype":{}}}}}')), 'key "constructor" is not allowed (at "db.parameters")');
    assert.equal(findUnsafeJson({ slots: { s: { prototype: 1 } } }), 'key "prototype" is not allowed (at "slots.s")');
    assert.deepEqual(parseGuardedJson('{"ttl":1e309}'), { ok: false, problem: '"ttl" is not a finite number' });
    assert.equal(findUnsafeJson({ ignore_slots: [1, -Infinity] }), '"ignore_slots[1]" is not a finite number');
    assert.equal(findUnsafeJson(Number.NaN), 'the top level is not a finite number');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
  it('passes ordinary documents and reports bad JSON', () => {
    assert.deepEqual(parseGuardedJson('{"ttl":30,"db":{"parameters":{"toString":"x"}}}'), {
      ok: true,
      value: { ttl: 30, db: { parameters: { toString: 'x' } } },
    });
    assert.deepEqual(parseGuardedJson('{"ttl": '), { ok: false, problem: 'the body is not valid JSON' });
  });
});
