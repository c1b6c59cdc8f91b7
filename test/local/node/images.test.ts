import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  builtinImageMappings,
  keelsonCliArgv,
  localizeArgv,
  parseImageReference,
  resolveContainerCommand,
  type ImageMapping,
} from '../../../local/node/images.js';
import { rewriteMountPaths } from '../../../local/node/volumes.js';

test('parseImageReference splits registry ports, tags and digests', () => {
  assert.deepEqual(parseImageReference('ghcr.io/keelson/keelson:0.1.0'), { repository: 'ghcr.io/keelson/keelson', tag: '0.1.0', digest: undefined });
  assert.deepEqual(parseImageReference('localhost:5000/web'), { repository: 'localhost:5000/web', tag: undefined, digest: undefined });
  assert.deepEqual(parseImageReference('registry.test/web:1@sha256:abc'), { repository: 'registry.test/web', tag: '1', digest: 'sha256:abc' });
});

test('any repository ending in keelson runs this repository CLI with the container args', () => {
  const mappings = builtinImageMappings();
  const cli = keelsonCliArgv();
  for (const image of ['ghcr.io/keelson/keelson:0.1.0', 'keelson', 'registry.local:5000/team/keelson@sha256:00']) {
    const resolved = resolveContainerCommand({ image, args: ['ha-node', '--name', 'x'] }, mappings);
    assert.deepEqual(resolved, { ok: true, argv: [...cli, 'ha-node', '--name', 'x'], hostArgs: cli.length });
  }
  assert.equal(resolveContainerCommand({ image: 'ghcr.io/keelson/keelson-docs:1' }, mappings).ok, false);
  assert.ok(cli.some((part) => part.endsWith('keelson.ts') || part.endsWith('keelson.js')));
});

test('containers run the code the starting command runs: a dist/ beside the sources is used only by a built CLI', () => {
  const root = mkdtempSync(join(tmpdir(), 'keelson-images-'));
  try {
    mkdirSync(join(root, 'dist', 'bin'), { recursive: true });
    writeFileSync(join(root, 'dist', 'bin', 'keelson.js'), '');
    const fromSources = keelsonCliArgv(root, false);
    assert.equal(fromSources.at(-1), join(root, 'bin', 'keelson.ts'), 'a stale dist/ shadowed the sources');
    assert.ok(fromSources.includes('--import'));
    assert.deepEqual(keelsonCliArgv(root, true), [process.execPath, join(root, 'dist', 'bin', 'keelson.js')]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('command replaces the entrypoint; the keelson alias maps to the CLI', () => {
  const mappings = builtinImageMappings();
  const cli = keelsonCliArgv();
  assert.deepEqual(resolveContainerCommand({ image: 'ghcr.io/keelson/keelson:0.1.0', command: ['keelson', 'exporter'], args: ['--x'] }, mappings), {
    ok: true,
    argv: [...cli, 'exporter', '--x'],
    hostArgs: cli.length,
  });
  assert.deepEqual(resolveContainerCommand({ image: 'busybox:1.36', command: ['/bin/sh', '-c'], args: ['echo hi'] }, mappings), {
    ok: true,
    argv: ['/bin/sh', '-c', 'echo hi'],
    hostArgs: 0,
  });
});

test('configured mappings use their CMD only when the container sets no args; unknown images fail clearly', () => {
  const mappings: ImageMapping[] = [{ repository: 'registry.test/web', entrypoint: ['node', 'server.mjs'], cmd: ['--default'] }];
  assert.deepEqual(resolveContainerCommand({ image: 'registry.test/web:2' }, mappings), { ok: true, argv: ['node', 'server.mjs', '--default'], hostArgs: 2 });
  assert.deepEqual(resolveContainerCommand({ image: 'registry.test/web:2', args: [] }, mappings), { ok: true, argv: ['node', 'server.mjs'], hostArgs: 2 });
  const missing = resolveContainerCommand({ image: 'nginx:1.27' }, mappings);
  assert.equal(missing.ok, false);
  if (!missing.ok) {
    assert.equal(missing.reason, 'ErrImagePull');
    assert.match(missing.message, /nginx:1\.27/);
  }
});

test('mount paths are rewritten in manifest args only, never in the host CLI path (a repository under /tmp)', () => {
  const mounts = [{ mountPath: '/tmp', hostPath: '/node/pods/p1/volumes/tmp', readOnly: false }];
  const resolved = { argv: ['/usr/bin/node', '/tmp/ci/main/dist/bin/keelson.js', 'ha-node', '--scratch', '/tmp/work'], hostArgs: 2 };
  assert.deepEqual(
    localizeArgv(resolved, (arg) => rewriteMountPaths(arg, mounts)),
    ['/usr/bin/node', '/tmp/ci/main/dist/bin/keelson.js', 'ha-node', '--scratch', '/node/pods/p1/volumes/tmp/work'],
  );
});
