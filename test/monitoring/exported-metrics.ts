import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority } from '../../lib/tls-certificates.js';
import { renderMetrics } from '../../sidecar/ha-node/api/metrics-text.js';
import { renderBackupMetrics } from '../../sidecar/ha-node/backup/metrics.js';
import { renderVolumeMetrics } from '../../sidecar/ha-node/disk/usage.js';
import { renderCertificateMetrics } from '../../sidecar/ha-node/api/certificate-metrics.js';
import type { NodeSnapshot } from '../../sidecar/ha-node/ha/snapshot.js';
import { defaultConfig } from '../../sidecar/ha-node/ha/settings.js';
import { builtinCollectorSources, builtinOrigin } from '../../sidecar/exporter/collectors/index.js';
import { parseCollectorSources } from '../../sidecar/exporter/config/load.js';
import { SelfMetrics } from '../../sidecar/exporter/process/selfmetrics.js';
import { createOperatorMetrics } from '../../operator/metrics.js';

/**
 * Metric names the code publishes, asked of the code itself: ha-node's renderers (with backups), the exporter's
 * built-in collectors and self-metrics (default namespace pg), and the operator's registry.
 */

function haNodeNames(): string[] {
  const snapshot: NodeSnapshot = {
    name: 'demo-0',
    scope: 'demo',
    version: '0.1.0',
    tags: {},
    dbState: 'stopped',
    offlineRole: 'replica',
    isLeader: false,
    failsafeActive: false,
    paused: false,
    dcsLastSeen: 0,
    pendingRestart: false,
    lastLoopAt: 0,
    config: defaultConfig,
  };
  const info = {
    stanza: 'demo',
    code: 0,
    message: 'ok',
    wal: [],
    repositories: [],
    backups: [{ label: 'x', type: 'full' as const, repository: 1, startedAt: '2026-01-01T00:00:00Z', stoppedAt: '2026-01-01T00:01:00Z', error: false }],
  };
  const backup = renderBackupMetrics(
    { status: { stanza: 'demo', stanzaReady: true }, info, pending: { segments: 0, oldestAgeSeconds: 0 }, archiveTimeout: 60 },
    '{scope="demo",name="demo-0"}',
  );
  const volumes = renderVolumeMetrics([{ volume: 'data', capacityBytes: 1, usedBytes: 0, freeBytes: 1 }], '{scope="demo",name="demo-0"}');
  const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
  writeFileSync(join(dir, 'server.crt'), createCertificateAuthority('demo').cert);
  const certificates = renderCertificateMetrics([{ certificate: 'server', path: join(dir, 'server.crt') }], '{scope="demo",name="demo-0"}');
  rmSync(dir, { recursive: true, force: true });
  return [...(renderMetrics(snapshot) + volumes + backup + certificates).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
}

function exporterNames(): string[] {
  const names: string[] = [];
  for (const collector of parseCollectorSources(builtinCollectorSources(), builtinOrigin, false).collectors) {
    for (const column of collector.columns) {
      const family = `${collector.name}_${column.rename ?? column.name}`;
      if (column.usage === 'GAUGE' || column.usage === 'COUNTER') names.push(family);
      if (column.usage === 'HISTOGRAM') names.push(`${family}_bucket`, `${family}_sum`, `${family}_count`);
    }
  }
  const build = { version: '', revision: '', branch: '', builddate: '', goversion: '', goos: '', goarch: '' };
  return [...names, ...new SelfMetrics('pg', [], build).familyNames()];
}

async function operatorNames(): Promise<string[]> {
  const text = await createOperatorMetrics().registry.metrics();
  return [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
    type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => `${name}${s}`) : [name!],
  );
}

export async function exportedMetricNames(): Promise<{ haNode: Set<string>; exporter: Set<string>; operator: Set<string> }> {
  return { haNode: new Set(haNodeNames()), exporter: new Set(exporterNames()), operator: new Set(await operatorNames()) };
}

const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** Metric names a PromQL expression selects: identifiers that are not functions, keywords, labels or literals. */
export function metricsInExpression(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\()?)/g)) {
    const [word, call] = [match[0], match[1]];
    if (call || keywords.has(word.toLowerCase())) continue;
    const before = stripped[match.index - 1];
    if (before !== undefined && /[0-9.$]/.test(before)) continue;
    names.add(word);
  }
  return [...names];
}
