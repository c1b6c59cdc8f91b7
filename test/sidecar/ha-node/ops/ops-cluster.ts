import { startCluster, type ClusterOptions, type TestCluster } from '../harness.js';

/**
 * A live cluster whose members serve the operations API: `keelson ha-node` mounts opsModules
 * itself (command.ts), so this is the ha-node engineer's harness as it is.
 */
export function startOpsCluster(options: ClusterOptions): Promise<TestCluster> {
  return startCluster(options);
}
