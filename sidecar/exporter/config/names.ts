/** Prometheus naming rules and a YAML map check shared by the collector validators. */
const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export const isValidMetricName = (name: string): boolean => metricNamePattern.test(name);
export const isValidLabelName = (name: string): boolean => labelNamePattern.test(name) && !name.startsWith('__');

export type Raw = Record<string, unknown>;

export function isMap(value: unknown): value is Raw {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
