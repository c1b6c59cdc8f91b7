// Which test files must not share the machine with another file: they run pods in network
// namespaces behind nftables, or hold timing-sensitive safety assertions (partitions) whose
// bounds are set for a machine they have to themselves. Everything else runs side by side
// (scripts/run-tests.mjs); files that start a local stack use /24s of their own (ipPrefix).
// A path matches by prefix.
export const alone = [
  'test/local/node/netns/',
  'test/local/cluster/up-down-namespace.test.ts',
  'test/operator/partition.test.ts',
  'test/operator/e2e-real-control-plane.test.ts',
];

export function runsAlone(file) {
  return alone.some((prefix) => file.startsWith(prefix));
}
