import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseListenAddress } from '../../lib/ports.js';

describe('parseListenAddress', () => {
  it('reads Go-style addresses', () => {
    assert.deepEqual(parseListenAddress(':9630'), { host: '0.0.0.0', port: 9630 });
    assert.deepEqual(parseListenAddress('127.0.0.2:8008'), { host: '127.0.0.2', port: 8008 });
    assert.deepEqual(parseListenAddress('[::1]:80'), { host: '::1', port: 80 });
    assert.deepEqual(parseListenAddress('8080', '127.0.0.1'), { host: '127.0.0.1', port: 8080 });
  });
  it('rejects garbage and out-of-range ports', () => {
    assert.throws(() => parseListenAddress('host:'), /invalid listen address/);
    assert.throws(() => parseListenAddress(':70000'), /0-65535/);
  });
});
