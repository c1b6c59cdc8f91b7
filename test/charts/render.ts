import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createHelm, type Helm } from '../support/helm.js';

/**
 * Renders charts/keelson with the real `helm template` (ADR 0505). One private Helm home per test
 * process, removed on exit.
 */
export const chartDir = fileURLToPath(new URL('../../charts/keelson/', import.meta.url));
let shared: { helm: Helm; dir: string } | undefined;

function renderer(): { helm: Helm; dir: string } {
  if (shared) return shared;
  const helm = createHelm();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-chart-values-'));
  process.once('exit', () => {
    helm.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return (shared = { helm, dir });
}

export interface K8sDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** Parses multi-document YAML as helm prints it, dropping empty documents. */
export function parseManifests(output: string): K8sDoc[] {
  return parseAllDocuments(output)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sDoc | null;
    })
    .filter((doc): doc is K8sDoc => doc !== null);
}

let valuesCount = 0;

/** Renders with values overrides (a values file); throws with helm's message on errors. */
export function renderChart(overrides: Record<string, unknown> = {}, release = 'keelson', namespace = 'keelson-system'): K8sDoc[] {
  const { helm, dir } = renderer();
  const valuesFile = join(dir, `values-${valuesCount++}.json`);
  writeFileSync(valuesFile, JSON.stringify(overrides));
  return parseManifests(helm.sync('template', release, chartDir, '--namespace', namespace, '--values', valuesFile));
}
