import { fuzzSuite } from './suite.js';
import { startApiServerTarget } from './targets/apiserver.js';

fuzzSuite({ title: 'API server stand-in', file: 'test/fuzz/apiserver.test.ts', start: startApiServerTarget, requests: 1500, rssGrowthBytes: 128 * 1024 * 1024 });
