import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/**
 * Renders charts/keelson like `helm template` with the Go renderer in ./render (Go text/template +
 * Masterminds/sprig, as Helm; see ADR 0502). The binary is built once per source version and
 * cached in the temp dir. Needs Debian's golang-go, golang-github-masterminds-sprig-dev and
 * golang-gopkg-yaml.v2-dev.
 */
const source = fileURLToPath(new URL('./render/main.go', import.meta.url));
export const chartDir = fileURLToPath(new URL('../../charts/keelson/', import.meta.url));

export function rendererBinary(): string {
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), 'keelson-chart-render');
  const binary = join(dir, `render-${hash}`);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('go', ['build', '-o', binary, source], {
      env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', GOFLAGS: '', GOCACHE: join(dir, 'gocache') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
    throw new Error(`cannot build the chart renderer (apt-get install golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev): ${stderr}`, { cause: err });
  }
  return binary;
}

export interface K8sDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** Renders with values overrides; throws with the renderer's message on template errors. */
export function renderChart(overrides: Record<string, unknown> = {}, release = 'keelson', namespace = 'keelson-system'): K8sDoc[] {
  const dir = join(tmpdir(), 'keelson-chart-render');
  mkdirSync(dir, { recursive: true });
  const valuesFile = join(dir, `values-${process.pid}-${Date.now()}.json`);
  writeFileSync(valuesFile, JSON.stringify(overrides));
  let output: string;
  try {
    output = execFileSync(rendererBinary(), [chartDir, release, namespace, valuesFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error((err as { stderr?: string }).stderr ?? String(err), { cause: err });
  } finally {
    rmSync(valuesFile, { force: true });
  }
  return parseAllDocuments(output)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sDoc | null;
    })
    .filter((doc): doc is K8sDoc => doc !== null);
}
