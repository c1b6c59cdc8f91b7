import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCollectorSources } from '../../../../sidecar/exporter/config/load.js';
import { escapeLabelValue, familiesOfText, formatValue, renderExposition } from '../../../../sidecar/exporter/text/exposition.js';
import { metricValue, transformRows, CollectorResultError } from '../../../../sidecar/exporter/scrape/transform.js';
import { parseMetrics } from '../helpers.js';

const collector = (yaml: string) => parseCollectorSources([{ file: 'u.yml', text: yaml }], 'u.yml', false).collectors[0];

describe('exposition text', () => {
  it('formats special values and escapes label values', () => {
    assert.equal(formatValue(NaN), 'NaN');
    assert.equal(formatValue(Infinity), '+Inf');
    assert.equal(formatValue(-Infinity), '-Inf');
    assert.equal(formatValue(1.5e-7), '1.5e-7');
    assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
    assert.equal(escapeLabelValue('plain'), 'plain');
  });

  it('merges a family split across collectors and drops repeated series', () => {
    const text = renderExposition([
      { name: 'x_a', help: 'first', type: 'gauge', lines: ['x_a{d="1"} 1'] },
      { name: 'x_b', help: '', type: 'counter', lines: ['x_b 2'] },
      { name: 'x_a', help: 'second', type: 'gauge', lines: ['x_a{d="2"} 3', 'x_a{d="1"} 9'] },
    ]);
    const parsed = parseMetrics(text);
    assert.deepEqual([...parsed.families.keys()], ['x_a', 'x_b']);
    assert.equal(parsed.families.get('x_a')?.help, 'first');
    assert.deepEqual(
      parsed.families.get('x_a')?.metrics.map((m) => m.value),
      ['1', '3'],
    );
    assert.equal(renderExposition([]), '');
  });

  it('reads its own text back into the same families (HELP escapes included)', () => {
    const families = [
      { name: 'x_a', help: 'back\\slash and\nnewline', type: 'gauge' as const, lines: ['x_a{d="1"} 1', 'x_a{d="2"} 2'] },
      { name: 'x_b', help: '', type: 'counter' as const, lines: ['x_b 2'] },
    ];
    const text = renderExposition(families);
    assert.deepEqual(familiesOfText(text), families);
    assert.equal(renderExposition(familiesOfText(text)), text);
  });
});

describe('rows to samples', () => {
  const histogram = collector(`
h:
  query: SELECT 1
  metrics:
    - db: { usage: LABEL }
    - age: { usage: HISTOGRAM, bucket: [1, 10] }
    - n: { usage: COUNTER, scale: 0.5 }
`);
  const fields = [
    { name: 'db', dataTypeID: 25 },
    { name: 'age', dataTypeID: 701 },
    { name: 'n', dataTypeID: 20 },
  ];

  it('builds snapshot histograms per label set as gauge families', () => {
    const out = transformRows(
      histogram,
      fields,
      [
        ['a', '0.5', '4'],
        ['a', '5', '6'],
        ['a', null, '8'],
        ['b', '50', null],
      ],
      [['k', 'v']],
    );
    const parsed = parseMetrics(renderExposition(out.families));
    const buckets = parsed.families
      .get('h_age_bucket')
      ?.metrics.filter((m) => m.labels?.db === 'a')
      .map((m) => [m.labels?.le, m.value]);
    assert.deepEqual(buckets, [
      ['1', '1'],
      ['10', '2'],
      ['+Inf', '2'],
    ]);
    assert.equal(parsed.families.get('h_age_count')?.metrics.find((m) => m.labels?.db === 'b')?.value, '1');
    assert.equal(parsed.families.get('h_age_sum')?.metrics.find((m) => m.labels?.db === 'a')?.value, '5.5');
    assert.equal(parsed.families.get('h_age_bucket')?.type, 'GAUGE');
    // Three rows share db="a": the series is emitted once (the first row wins) so the output stays valid.
    assert.deepEqual(
      parsed.families.get('h_n')?.metrics.map((m) => m.value),
      ['2', 'NaN'],
    );
    assert.ok(parsed.families.get('h_n')?.metrics.every((m) => m.labels?.k === 'v'));
  });

  it('a missing LABEL or HISTOGRAM column fails; a missing GAUGE is skipped with a warning', () => {
    assert.throws(() => transformRows(histogram, [fields[1], fields[2]], [['1', '2']], []), CollectorResultError);
    const g = collector('g:\n  query: SELECT 1\n  metrics:\n    - a: { usage: GAUGE }\n    - b: { usage: GAUGE }\n');
    const out = transformRows(g, [{ name: 'a', dataTypeID: 23 }], [['1']], []);
    assert.equal(out.sampleCount, 1);
    assert.ok(out.warnings.some((w) => w.includes('"b" missing')));
  });

  it('converts values as the Go driver does', () => {
    const col = { name: 'v', usage: 'GAUGE' as const, description: '', scale: 10 };
    assert.equal(metricValue('t', 16, col), 10);
    assert.equal(metricValue('f', 16, col), 0);
    assert.equal(metricValue('123456789012345678', 20, { ...col, scale: 1 }), 123456789012345680);
    assert.ok(Number.isNaN(metricValue('abc', 25, col)));
    assert.ok(Number.isNaN(metricValue(null, 23, col)));
    assert.equal(metricValue(null, 23, { ...col, default: 2 }), 20);
    assert.equal(metricValue(new Date(1_700_000_000_000), 1184, col), 1_700_000_000, 'timestamps are not scaled');
    assert.equal(metricValue('Infinity', 701, { ...col, scale: 1 }), Infinity);
  });
});
