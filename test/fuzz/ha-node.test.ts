import { fuzzSuite } from './suite.js';
import { startHaNodeTarget } from './targets/ha-node.js';

fuzzSuite({ title: 'ha-node REST API', file: 'test/fuzz/ha-node.test.ts', start: startHaNodeTarget, requests: 1000, rssGrowthBytes: 128 * 1024 * 1024 });
