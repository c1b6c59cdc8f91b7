import { fuzzSuite } from './suite.js';
import { startAdminTarget } from './targets/admin.js';

fuzzSuite({ title: 'admin backend', file: 'test/fuzz/admin.test.ts', start: startAdminTarget, requests: 1500, rssGrowthBytes: 128 * 1024 * 1024 });
