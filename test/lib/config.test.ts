import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, booleanKey, listKey, loadConfig, numberKey, stringKey } from '../../lib/config.js';

const spec = {
  listen: stringKey({ env: 'APP_LISTEN', default: ':8080' }),
  ttl: numberKey({ env: 'APP_TTL', default: 30 }),
  debug: booleanKey({ env: 'APP_DEBUG', default: false }),
  tags: listKey({ env: 'APP_TAGS', default: [] }),
  'db.url': stringKey({ env: 'APP_DB_URL', default: 'postgres://localhost/x' }),
};

function withFile(text: string, fn: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-config-'));
  try {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, text);
    fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('loadConfig', () => {
  it('uses defaults when nothing else is given', () => {
    assert.deepEqual(loadConfig(spec, { env: {} }), { listen: ':8080', ttl: 30, debug: false, tags: [], 'db.url': 'postgres://localhost/x' });
  });

  it('ranks flags over env over file over defaults', () => {
    withFile('ttl: 10\nlisten: ":1"\ndb:\n  url: postgres://file/db\n', (file) => {
      const config = loadConfig(spec, { env: { APP_TTL: '20', APP_DEBUG: 'yes', APP_TAGS: 'a, b' }, file, flags: { ttl: '5' } });
      assert.equal(config.ttl, 5);
      assert.equal(config.listen, ':1');
      assert.equal(config.debug, true);
      assert.deepEqual(config.tags, ['a', 'b']);
      assert.equal(config['db.url'], 'postgres://file/db');
      const noFlag = loadConfig(spec, { env: { APP_TTL: '20' }, file });
      assert.equal(noFlag.ttl, 20);
    });
  });

  it('names the key and the source of a bad value', () => {
    assert.throws(
      () => loadConfig(spec, { env: { APP_TTL: 'soon' } }),
      (error: unknown) => error instanceof ConfigError && error.key === 'ttl' && /env APP_TTL/.test(error.message),
    );
    assert.throws(() => loadConfig(spec, { env: { APP_DEBUG: 'maybe' } }), /"debug" \(from env APP_DEBUG\)/);
  });

  it('rejects unknown file keys and unreadable files by name', () => {
    withFile('tll: 10\n', (file) => {
      assert.throws(() => loadConfig(spec, { env: {}, file }), /"tll".*unknown key/);
    });
    assert.throws(() => loadConfig(spec, { env: {}, file: '/nonexistent/keelson.yaml' }), /cannot read/);
    withFile('- a\n- b\n', (file) => {
      assert.throws(() => loadConfig(spec, { env: {}, file }), /top level must be a map/);
    });
  });
});
