/**
 * The stand-in's selector grammar against apimachinery's (labels.Parse, fields.ParseSelector):
 * what the real server refuses is refused with its message, what it accepts selects the same.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../../local/apiserver/errors.js';
import { parseFieldSelector, parseLabelSelector } from '../../../../local/apiserver/storage/selectors.js';

function refusal(parse: () => unknown): string {
  try {
    parse();
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    return err.message;
  }
  return assert.fail('accepted');
}

const qualifiedName =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('label selectors', () => {
  it('refuses an empty term after a comma, and a lone comma', () => {
    assert.equal(
      refusal(() => parseLabelSelector(',')),
      "found ',', expected: !, identifier, or 'end of string'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('fz=x,')),
      "found '', expected: identifier after ','",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a,,b')),
      "found ',', expected: identifier after ','",
    );
    assert.equal(
      refusal(() => parseLabelSelector(',a')),
      "found ',', expected: !, identifier, or 'end of string'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a , ')),
      "found '', expected: identifier after ','",
    );
  });

  it('refuses bad keys and values with the real messages', () => {
    assert.equal(
      refusal(() => parseLabelSelector('-a=b')),
      `unable to parse requirement: invalid label key "-a": ${qualifiedName}`,
    );
    assert.equal(
      refusal(() => parseLabelSelector('a/b/c')),
      `unable to parse requirement: invalid label key "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
    assert.match(
      refusal(() => parseLabelSelector(`${'k'.repeat(64)}=v`)),
      /invalid label key "k+": name part must be no more than 63 characters/,
    );
    assert.match(
      refusal(() => parseLabelSelector('a=-b')),
      /^unable to parse requirement: invalid label value: "-b": at key: "a": a valid label must be an empty string or consist of/,
    );
    assert.match(
      refusal(() => parseLabelSelector(`a in (x,${'v'.repeat(64)})`)),
      /at key: "a": must be no more than 63 characters/,
    );
    assert.equal(
      refusal(() => parseLabelSelector('a>x')),
      "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer",
    );
  });

  it('refuses what does not follow the grammar', () => {
    assert.equal(
      refusal(() => parseLabelSelector('a=b=c')),
      "found '=', expected: ',' or 'end of string'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('!!')),
      "unable to parse requirement: found '!', expected: identifier",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a b')),
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a in b')),
      "unable to parse requirement: found 'b' expected: '('",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a in (b')),
      "unable to parse requirement: found '', expected: ',' or ')'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a in (b c)')),
      "unable to parse requirement: found 'c', expected: ',' or ')'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a in (=)')),
      "unable to parse requirement: found '=', expected: ',', ')' or identifier",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a in (,,)')),
      "unable to parse requirement: found ')', expected: ',', or identifier",
    );
    assert.equal(
      refusal(() => parseLabelSelector('!a=b')),
      "found '=', expected: ',' or 'end of string'",
    );
    assert.equal(
      refusal(() => parseLabelSelector('a==(')),
      "unable to parse requirement: found '(', expected: identifier",
    );
    assert.equal(
      refusal(() => parseLabelSelector('(')),
      "found '(', expected: !, identifier, or 'end of string'",
    );
  });

  it('accepts what the real server accepts and selects the same', () => {
    const match = parseLabelSelector(' app = db , tier in (a, b),!canary,env,role!=replica');
    assert.equal(match({ app: 'db', tier: 'a', env: 'x' }), true);
    assert.equal(match({ app: 'db', tier: 'c', env: 'x' }), false);
    assert.equal(match({ app: 'db', tier: 'a', env: 'x', canary: '1' }), false);
    assert.equal(match({ app: 'db', tier: 'b', env: 'x', role: 'replica' }), false);
    assert.equal(match({ app: 'db', tier: 'b' }), false, 'env must exist');
    for (const everything of ['', '   ', undefined]) assert.equal(parseLabelSelector(everything)(undefined), true);
    assert.equal(parseLabelSelector('a=')({ a: '' }), true, 'an empty value');
    assert.equal(parseLabelSelector('a=,b')({ a: '', b: 'x' }), true);
    assert.equal(parseLabelSelector('a in ()')({ a: '' }), true);
    assert.equal(parseLabelSelector('a notin (x,)')({ a: '' }), false, '",)" adds the empty value');
    assert.equal(parseLabelSelector('in=notin')({ in: 'notin' }), true, 'keywords are identifiers as keys and values');
    assert.equal(parseLabelSelector('example.com/role==primary')({ 'example.com/role': 'primary' }), true);
    assert.equal(parseLabelSelector('n>5')({ n: '6' }), true);
    assert.equal(parseLabelSelector('n>5')({ n: 'six' }), false);
    assert.equal(parseLabelSelector('n<5')({}), false);
  });
});

describe('field selectors', () => {
  it('skips empty terms as the real server does', () => {
    assert.deepEqual(parseFieldSelector(','), []);
    assert.deepEqual(parseFieldSelector('metadata.name=x,'), [{ field: 'metadata.name', negate: false, value: 'x' }]);
  });

  it('splits at the first operator, trims nothing and unescapes values', () => {
    assert.deepEqual(parseFieldSelector('status.phase!=Running,metadata.name==x'), [
      { field: 'metadata.name', negate: false, value: 'x' },
      { field: 'status.phase', negate: true, value: 'Running' },
    ]);
    assert.deepEqual(parseFieldSelector('metadata.name = x'), [{ field: 'metadata.name ', negate: false, value: ' x' }]);
    assert.deepEqual(parseFieldSelector('a=x\\,y\\=z\\\\'), [{ field: 'a', negate: false, value: 'x,y=z\\' }]);
  });

  it('refuses terms without an operator and unescaped or badly escaped values', () => {
    assert.equal(
      refusal(() => parseFieldSelector('a=b,c')),
      "invalid selector: 'a=b,c'; can't understand 'c'",
    );
    assert.equal(
      refusal(() => parseFieldSelector('a=b=c')),
      'invalid field selector: unescaped character in value: 61',
    );
    assert.equal(
      refusal(() => parseFieldSelector('a=b\\x')),
      'invalid field selector: invalid escape sequence: \\x',
    );
    assert.equal(
      refusal(() => parseFieldSelector('a=b\\')),
      'invalid field selector: invalid escape sequence: \\',
    );
  });
});
