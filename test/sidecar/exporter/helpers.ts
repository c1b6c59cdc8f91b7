import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { createLogger, type Logger } from '../../../lib/log.js';
import { resolveExporterOptions, type ExporterOptions } from '../../../sidecar/exporter/options.js';
import { startExporter, type RunningExporter } from '../../../sidecar/exporter/run.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The real pg_exporter configuration beside the repository (never copied into it). */
export const sharedConfigDir = process.env.KEELSON_PG_EXPORTER_CONFIG ?? resolve(repoRoot, '../shared/pg_exporter-config');
export const sharedConfigFile = resolve(sharedConfigDir, 'pg_exporter.yml');
export const sharedConfigSubdir = resolve(sharedConfigDir, 'config');

export function quietLogger(): Logger {
  return createLogger({ name: 'exporter-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
}

/** Options as the CLI would resolve them, listening on a free loopback port, with no env leaking in. */
export function testOptions(flags: Record<string, unknown>): ExporterOptions {
  return resolveExporterOptions({ 'web.listen-address': ['127.0.0.1:0'], 'connect-timeout': '1000', ...flags }, {});
}

export async function startTestExporter(flags: Record<string, unknown>): Promise<RunningExporter & { url: string }> {
  const running = await startExporter(testOptions(flags), quietLogger());
  return Object.assign(running, { url: running.urls[0] });
}

export interface ParsedMetrics {
  families: Map<string, ParsedFamily>;
  /** Number of samples (a histogram counts its buckets, count and sum). */
  samples: number;
}

// Go's strconv.ParseFloat, which Prometheus uses: decimal or exponent forms, NaN and Inf in any case.
const floatPattern = /^(?:[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|nan|[-+]?inf)$/i;

/**
 * Parses an exposition body with parse-prometheus-text-format and adds the checks Prometheus
 * makes that the package leaves out: each family appears once (contiguous), every value is a
 * float, and no series repeats.
 */
export function parseMetrics(text: string): ParsedMetrics {
  const parsed = parsePrometheusTextFormat(text);
  const families = new Map<string, ParsedFamily>();
  let samples = 0;
  for (const family of parsed) {
    if (families.has(family.name)) throw new Error(`family ${family.name} appears twice (not contiguous)`);
    families.set(family.name, family);
    const seen = new Set<string>();
    // The package drops labels of histogram/summary samples, so only plain samples are checked for repeats.
    const plain = family.type !== 'HISTOGRAM' && family.type !== 'SUMMARY';
    for (const metric of family.metrics) {
      const key = JSON.stringify(Object.entries(metric.labels ?? {}).sort());
      if (plain && seen.has(key)) throw new Error(`duplicate series ${family.name}${key}`);
      seen.add(key);
      const values =
        metric.value !== undefined
          ? [metric.value]
          : [metric.count, metric.sum, ...Object.values(metric.buckets ?? {}), ...Object.values(metric.quantiles ?? {})].filter(
              (v): v is string => v !== undefined,
            );
      for (const value of values) if (!floatPattern.test(value)) throw new Error(`family ${family.name}: value "${value}" is not a float`);
      samples += values.length;
    }
  }
  return { families, samples };
}

/** The single value of a family without labels (or the first sample). */
export function valueOf(metrics: ParsedMetrics, name: string): number {
  const family = metrics.families.get(name);
  if (!family || family.metrics.length === 0) throw new Error(`metric ${name} missing`);
  return Number(family.metrics[0].value);
}

export async function get(url: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Polls until check() is true or the time is up; returns the last observed value for the message. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!check(value)) {
    if (Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}
