import { fuzzSuite } from './suite.js';
import { startExporterTarget } from './targets/exporter.js';

fuzzSuite({ title: 'exporter', file: 'test/fuzz/exporter.test.ts', start: startExporterTarget, requests: 2000, rssGrowthBytes: 96 * 1024 * 1024 });
