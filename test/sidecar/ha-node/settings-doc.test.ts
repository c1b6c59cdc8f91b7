import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createHaNodeCommand } from '../../../sidecar/ha-node/command.js';
import { haNodeConfigSpec } from '../../../sidecar/ha-node/config.js';
import { authEnv } from '../../../api/ha-node/credentials.js';

/** docs/ha-node-settings.md names every setting ha-node reads, with its environment variable and flag. */
describe('docs/ha-node-settings.md', () => {
  const doc = readFileSync(new URL('../../../docs/ha-node-settings.md', import.meta.url), 'utf8');
  const rows = doc.split('\n').filter((line) => line.startsWith('| `'));

  it('has a row for every key of the configuration, naming its environment variable', () => {
    for (const [key, spec] of Object.entries(haNodeConfigSpec)) {
      const row = rows.find((line) => line.startsWith(`| \`${key}\` |`));
      assert.ok(row, `a row for ${key}`);
      const env = (spec as { env?: string }).env;
      if (env) assert.ok(row.includes(`\`${env}\``), `${key}'s row names ${env}`);
    }
    assert.equal(rows.length, Object.keys(haNodeConfigSpec).length, 'no row for a key that does not exist');
  });

  it('names each command-line flag in the row of its key', () => {
    const flags = createHaNodeCommand()
      .options.map((o) => o.long!)
      .filter((flag) => flag !== '--config');
    assert.ok(flags.length >= 10);
    for (const flag of flags)
      assert.ok(
        rows.some((line) => line.includes(`| \`${flag}\` |`)),
        `${flag} is documented`,
      );
  });

  it('explains the API credentials of the environment', () => {
    for (const name of Object.values(authEnv)) assert.ok(doc.includes(`\`${name}\``), name);
    assert.match(doc, /\*_FILE/);
    assert.match(doc, /`LOG_LEVEL`/);
  });
});
