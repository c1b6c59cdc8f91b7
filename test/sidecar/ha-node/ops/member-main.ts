/**
 * Test entry for one ha-node member with the operations API mounted: the same settings and
 * runHaNode as `keelson ha-node`, plus opsModules (until command.ts passes them itself).
 */
import { join } from 'node:path';
import { opsModules } from '../../../../sidecar/ha-node/api/ops/index.js';
import { loadHaNodeSettings } from '../../../../sidecar/ha-node/config.js';
import { runHaNode } from '../../../../sidecar/ha-node/run.js';

const repoRoot = new URL('../../../../', import.meta.url).pathname;
const settings = loadHaNodeSettings({ flags: {} });
const node = await runHaNode(settings, {
  apiModules: opsModules,
  fencerCommand: [process.execPath, '--import', 'tsx', join(repoRoot, 'bin/keelson.ts')],
});
const stop = (): void => {
  void node.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
