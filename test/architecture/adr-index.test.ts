import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/** docs/adr/README.md indexes every decision record, and only existing ones. */
describe('docs/adr/README.md', () => {
  const folder = new URL('../../docs/adr/', import.meta.url);
  const records = readdirSync(folder).filter((name) => /^\d{4}-.+\.md$/.test(name));
  const index = readFileSync(new URL('README.md', folder), 'utf8');
  const linked = [...index.matchAll(/^\| (\d{4}) \| \[[^\]]+\]\(([^)]+)\) \| .+ \|$/gm)].map((m) => ({ number: m[1]!, file: m[2]! }));

  it('has a row for every record, with its number', () => {
    assert.ok(records.length > 50, `${records.length} records`);
    for (const record of records)
      assert.ok(
        linked.some((row) => row.file === record && record.startsWith(row.number)),
        `a row for ${record}`,
      );
  });

  it('links no record that does not exist, and each once', () => {
    assert.deepEqual(
      linked.map((row) => row.file).filter((file) => !records.includes(file)),
      [],
    );
    assert.equal(new Set(linked.map((row) => row.file)).size, linked.length);
  });

  it('gives numbers no two records share', () => {
    const numbers = records.map((name) => name.slice(0, 4));
    assert.deepEqual(
      numbers.filter((n, i) => numbers.indexOf(n) !== i),
      [],
    );
  });
});
