import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatResult, optionsFromEnv, runCampaign, type FuzzTarget } from './campaign.js';
import { campaignSeed } from './random.js';

export interface FuzzSuite {
  /** What the suite fuzzes, e.g. "admin backend". */
  title: string;
  /** This test file, for the replay line. */
  file: string;
  start(): Promise<FuzzTarget>;
  /** Requests per CI run (FUZZ_REQUESTS overrides). */
  requests: number;
  rssGrowthBytes: number;
}

/** One campaign against one freshly started server, failing with the seed and the offending requests. */
export function fuzzSuite(suite: FuzzSuite): void {
  describe(`fuzz: ${suite.title}`, { timeout: 600_000 }, () => {
    let target: FuzzTarget;
    const seed = campaignSeed();
    before(async () => {
      target = await suite.start();
    });
    after(async () => target?.stop());

    it('survives hostile requests: no exit, no unexpected 5xx, no change from a refused request, no secret logged, RSS bounded', async () => {
      const result = await runCampaign(target, { ...optionsFromEnv(seed, suite.requests), rssGrowthBytes: suite.rssGrowthBytes });
      const report = formatResult(result, suite.file);
      console.log(report);
      assert.equal(result.failures.length, 0, report);
    });
  });
}
