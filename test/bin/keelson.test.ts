import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'bin/keelson.ts', ...args], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });

describe('keelson CLI', () => {
  it('lists every program in --help', () => {
    const result = cli('--help');
    assert.equal(result.status, 0);
    for (const sub of ['operator', 'ha-node', 'exporter', 'admin', 'ctl', 'local']) {
      assert.match(result.stdout, new RegExp(`^\\s+${sub}\\b`, 'm'), `${sub} listed`);
    }
  });

  it('prints the package version', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const result = cli('--version');
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), pkg.version);
  });

  it('exits 2 with usage on stderr for a bad flag or an unknown subcommand', () => {
    for (const args of [['--bogus'], ['nope'], ['exporter', '--no-such-flag']]) {
      const result = cli(...args);
      assert.equal(result.status, 2, `keelson ${args.join(' ')}`);
      assert.match(result.stderr, /error: unknown (option|command)/);
      assert.match(result.stderr, /--help/);
    }
  });
});
