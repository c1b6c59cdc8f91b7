import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

// No Docker engine here, so the Dockerfile is checked for the properties that matter in production.
const lines = readFileSync('Dockerfile', 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile', () => {
  it('pins every base image to an exact version tag', () => {
    const froms = lines.filter((l) => /^FROM\s/i.test(l));
    assert.ok(froms.length >= 2, 'multi-stage build');
    for (const from of froms) {
      const image = from.split(/\s+/)[1];
      assert.match(image, /:(\d+\.\d+\.\d+)[^\s]*$|@sha256:[0-9a-f]{64}$/, `${image} is pinned`);
    }
  });

  it('runs the Node version the tests run on: a maintained LTS, the same in the image and in npm scripts', () => {
    const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.node;
    assert.match(pinned, /^\d+\.\d+\.\d+$/, 'the node devDependency is an exact version');
    const froms = lines.filter((l) => /^FROM\s/i.test(l)).map((l) => l.split(/\s+/)[1]);
    for (const image of froms) assert.equal(image, `node:${pinned}-bookworm-slim`);
    // npm scripts put node_modules/.bin first on PATH, so `npm test` runs the pinned binary.
    assert.equal(process.versions.node, pinned, 'run through npm test, the pinned node runs the tests');
    assert.ok(Number(pinned.split('.')[0]) % 2 === 0 && Number(pinned.split('.')[0]) >= 22, 'an even (LTS) line');
  });

  it('runs as a non-root numeric user in the final stage', () => {
    const lastFrom = lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true);
    const users = lines.slice(lastFrom).filter((l) => /^USER\s/i.test(l));
    assert.equal(users.length, 1);
    const user = users[0].split(/\s+/)[1].split(':')[0];
    assert.match(user, /^\d+$/, 'numeric so runAsNonRoot can verify it');
    assert.notEqual(user, '0');
  });

  it('keeps dev dependencies and secrets out of the runtime image, and ships PostgreSQL 15', () => {
    const text = lines.join('\n');
    assert.match(text, /npm prune --omit=dev|npm ci --omit=dev/);
    assert.match(text, /postgresql-15/);
    assert.match(text, /pgbackrest/, 'the backup engine ships in the runtime image');
    assert.doesNotMatch(text, /(PASSWORD|SECRET|TOKEN)\s*=/i);
    assert.doesNotMatch(text, /^ADD\s+https?:/im);
    assert.match(text, /^ENTRYPOINT \["keelson"\]$/m);
  });
});
