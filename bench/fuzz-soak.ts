/**
 * Fuzz soak (not run in CI): the CI fuzz campaigns (test/fuzz/) run far longer, default 10,000
 * requests per server, and print per server: requests, answer-code histogram, time, RSS before
 * and after, and any problems found.
 *
 *   node --import tsx bench/fuzz-soak.ts [admin|exporter|ha-node|apiserver ...]
 *   SOAK_REQUESTS=20000 FUZZ_SEED=123 node --import tsx bench/fuzz-soak.ts admin
 */
import { formatResult, runCampaign, type FuzzTarget } from '../test/fuzz/campaign.js';
import { campaignSeed } from '../test/fuzz/random.js';
import { startAdminTarget } from '../test/fuzz/targets/admin.js';
import { startApiServerTarget } from '../test/fuzz/targets/apiserver.js';
import { startExporterTarget } from '../test/fuzz/targets/exporter.js';
import { startHaNodeTarget } from '../test/fuzz/targets/ha-node.js';

const starters: Record<string, () => Promise<FuzzTarget>> = {
  admin: startAdminTarget,
  exporter: startExporterTarget,
  'ha-node': startHaNodeTarget,
  apiserver: startApiServerTarget,
};
const requests = Number(process.env.SOAK_REQUESTS ?? 10_000);
const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(starters);
let problems = 0;
for (const name of names) {
  const start = starters[name];
  if (!start) throw new Error(`unknown server ${name}: one of ${Object.keys(starters).join(', ')}`);
  const seed = campaignSeed();
  const target = await start();
  try {
    const result = await runCampaign(target, { seed, requests, rssGrowthBytes: 128 * 1024 * 1024, progressEvery: 1000 });
    console.log(formatResult(result, `test/fuzz/${name}.test.ts`));
    problems += result.failures.length;
  } finally {
    await target.stop();
  }
}
process.exit(problems ? 1 : 0);
