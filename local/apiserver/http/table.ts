/** meta.k8s.io/v1 Table output for `kubectl get` (lists, single objects and watch events). */
import type { ComputedColumn } from '../schema/builtins.js';
import { evaluateJsonPath } from '../schema/jsonpath.js';
import type { PrinterColumn, ResourceType } from '../schema/resources.js';
import type { KubeObject } from '../types.js';

/** True when the Accept header asks for a Table (kubectl get does). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

function age(o: KubeObject, now = Date.now()): string {
  const created = Date.parse(o.metadata.creationTimestamp ?? '');
  if (Number.isNaN(created)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - created) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

function columnsOf(type: ResourceType): ComputedColumn[] {
  const columns = (type.columns ?? []) as ComputedColumn[];
  const name: ComputedColumn = {
    name: 'Name',
    type: 'string',
    format: 'name',
    jsonPath: '.metadata.name',
    description: 'Name must be unique within a namespace.',
    value: type.nameCell,
  };
  const created: ComputedColumn = {
    name: 'Age',
    type: 'date',
    jsonPath: '.metadata.creationTimestamp',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  };
  if (type.customColumns) {
    // CRDs with additionalPrinterColumns get exactly those (plus NAME); no AGE is added.
    return [name, ...columns];
  }
  const wide = ((type.wideColumns ?? []) as ComputedColumn[]).map((c) => ({ ...c, priority: 1 }));
  return [name, ...columns, created, ...wide];
}

function cell(column: ComputedColumn, o: KubeObject): unknown {
  if (column.value) return column.value(o);
  if (column.name === 'Age' && column.type === 'date' && column.jsonPath === '.metadata.creationTimestamp') return age(o);
  let values: unknown[];
  try {
    values = evaluateJsonPath(o, column.jsonPath);
  } catch {
    values = [];
  }
  if (values.length === 0) return column.type === 'integer' || column.type === 'number' ? null : '';
  const v = values.length === 1 ? values[0] : values.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(',');
  if (column.type === 'date' && typeof v === 'string') {
    const when = Date.parse(v);
    return Number.isNaN(when) ? v : age({ metadata: { creationTimestamp: v } } as KubeObject);
  }
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return v;
}

function partialMetadata(o: KubeObject): KubeObject {
  const meta = { ...o.metadata };
  delete meta.managedFields;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta };
}

export function toTable(type: ResourceType, objects: KubeObject[], listMeta: Record<string, unknown>, withDefinitions = true): Record<string, unknown> {
  const columns = columnsOf(type);
  const definitions = columns.map((c: PrinterColumn, i) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? c.name,
    priority: c.priority ?? 0,
    ...(i === 0 ? {} : {}),
  }));
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withDefinitions ? definitions : null,
    rows: objects.map((o) => ({ cells: columns.map((c) => cell(c, o)), object: partialMetadata(o) })),
  };
}
