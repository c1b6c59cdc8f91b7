import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AdminPaths, ExporterPaths, HaNodePaths, Ports } from '../../lib/ports.js';

/** docs/api holds the contracts: every path the programs serve (lib/ports.ts) appears in its file, with the port. */

const read = (name: string): string => readFileSync(new URL(`../../docs/api/${name}`, import.meta.url), 'utf8');

describe('docs/api', () => {
  it('ha-node.md documents every ha-node path and its port', () => {
    const doc = read('ha-node.md');
    for (const path of Object.values(HaNodePaths)) assert.ok(doc.includes(`\`${path}\``), `${path}`);
    assert.ok(doc.includes(`port ${Ports.haNodeApi}`));
  });

  it('exporter.md documents every exporter path, alias and its port', () => {
    const doc = read('exporter.md');
    const paths = Object.values(ExporterPaths).flatMap((p) => (Array.isArray(p) ? p : [p])) as string[];
    for (const path of paths) assert.ok(doc.includes(`\`${path}\``), `${path}`);
    assert.ok(doc.includes(`port ${Ports.exporter}`));
  });

  it('admin.md documents the API prefix, health and metrics paths and the port', () => {
    const doc = read('admin.md');
    for (const path of Object.values(AdminPaths)) assert.ok(doc.includes(`\`${path}`), `${path}`);
    assert.ok(doc.includes(`port ${Ports.admin}`));
  });

  it('README.md links each contract', () => {
    const index = read('README.md');
    for (const file of ['ha-node.md', 'exporter.md', 'admin.md']) assert.ok(index.includes(`(${file})`), file);
  });
});
