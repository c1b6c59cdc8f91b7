import { fuzzSuite } from './suite.js';
import { startApiServerTarget } from './targets/apiserver.js';

// The stand-in keeps what accepted requests stored (objects with bodies up to its size limits) and
// the last 1,000 watch events with whole objects: bounded, but larger than a stateless server's.
fuzzSuite({
  title: 'API server stand-in',
  file: 'test/fuzz/apiserver.test.ts',
  start: startApiServerTarget,
  requests: 1500,
  rssGrowthBytes: 256 * 1024 * 1024,
});
