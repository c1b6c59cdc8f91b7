import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { minimumNodeMajor, unsupportedNodeMessage } from '../../lib/cli/node-check.js';
import { runProcess } from '../support/run-process.js';

/** The distribution's Node.js when it is older than the supported one (Debian's, NodeSource's 20). */
function oldSystemNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const major = Number(/^v(\d+)/.exec(execFileSync(candidate, ['--version'], { encoding: 'utf8' }))?.[1]);
    if (major < minimumNodeMajor) return candidate;
  }
  return undefined;
}

describe('the Node.js version check', () => {
  it('accepts the supported majors and refuses older ones by name', () => {
    assert.equal(unsupportedNodeMessage('v24.21.0', '/x/node'), undefined);
    assert.equal(unsupportedNodeMessage('v22.0.0', '/x/node'), undefined);
    assert.match(unsupportedNodeMessage('v20.20.2', '/usr/bin/node') ?? '', /keelson needs Node\.js 22 or newer; this is v20\.20\.2 \(\/usr\/bin\/node\)/);
  });

  it('matches package.json "engines"', () => {
    const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, `>=${minimumNodeMajor}`);
  });

  const old = oldSystemNode();
  it(
    `an old Node.js gets the message and exit code 1, not a crash (${old ?? 'no old Node.js on this machine'})`,
    { skip: old ? false : 'no Node.js older than the supported one is installed here' },
    async () => {
      // The admin program loads argon2's native module, which crashes Node 20 with a segmentation fault.
      for (const entry of [
        ['bin/keelson.ts', 'admin', '--help'],
        ['bin/kubectl-keelson.ts', '--help'],
      ]) {
        const result = await runProcess(old!, ['--import', 'tsx', ...entry], { timeoutMs: 60_000 });
        assert.equal(result.signal, null, `${entry[0]} ended by a signal`);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, new RegExp(`keelson needs Node\\.js ${minimumNodeMajor} or newer; this is v\\d+`));
      }
    },
  );
});
