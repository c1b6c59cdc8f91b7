import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { phases } from '../../api/crd/types.js';

/** docs/troubleshooting.md explains every phase, condition reason and Event reason the operator writes. */

const operatorDir = fileURLToPath(new URL('../../operator/', import.meta.url));
const doc = readFileSync(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [readFileSync(join(dir, e.name), 'utf8')] : [],
  );
}

describe('docs/troubleshooting.md', () => {
  const code = sources(operatorDir).join('\n');

  it('has a row for every Event reason the operator records', () => {
    const reasons = new Set(
      [...code.matchAll(/events\.record\([^,]+,\s*(?:'(?:Normal|Warning)'|type),\s*[`']([A-Za-z]+)(\$\{[^}]+\})?[`']/g)].map((m) =>
        m[2] ? `${m[1]}*` : m[1]!,
      ),
    );
    assert.ok(reasons.size >= 10, `${reasons.size} reasons found in the operator: ${[...reasons].join(', ')}`);
    for (const reason of reasons) {
      if (reason.endsWith('*')) assert.match(doc, new RegExp(`\\| ${reason.slice(0, -1)}Succeeded / ${reason.slice(0, -1)}Failed \\|`), reason);
      else assert.match(doc, new RegExp(`\\| ${reason} \\|`), `Event ${reason} is explained`);
    }
  });

  it('explains every phase and every condition reason', () => {
    for (const phase of phases) assert.match(doc, new RegExp(`\\| ${phase} \\|`), `phase ${phase}`);
    const status = ['status.ts', 'serving.ts', 'refusals.ts'].map((file) => readFileSync(join(operatorDir, 'reconcile', file), 'utf8')).join('\n');
    // Reasons are the quoted words on the lines that build conditions or pick their reasons.
    // (or a few lines below one, where the formatter broke a long expression).
    const lines = status.split('\n');
    const reasonLines = lines.filter((_, i) => lines.slice(Math.max(0, i - 3), i + 1).some((line) => /Reason|condition\(|reason: '/.test(line)));
    const reasons = new Set(reasonLines.flatMap((line) => [...line.matchAll(/'([A-Z][A-Za-z]+)'/g)].map((m) => m[1]!)));
    for (const type of ['Ready', 'Progressing', 'Degraded', 'True', 'False']) reasons.delete(type);
    for (const reason of [
      'AllInstancesReady',
      'NoPrimary',
      'InstancesNotReady',
      'AsExpected',
      'ServerLacksApi',
      'AllApisServed',
      'AllObjectsApplied',
      'Refused',
      'InvalidSpec',
      'Stable',
      'RollingUpdate',
      'PodsNotReady',
      'RoleLabelPending',
      'EndpointsPending',
    ]) {
      assert.ok(reasons.has(reason), `${reason} is found among the reasons in the code`);
    }
    for (const reason of reasons) assert.ok(doc.includes(`\`${reason}\``), `condition reason ${reason} is explained`);
  });
});
