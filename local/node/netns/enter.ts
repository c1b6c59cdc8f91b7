/**
 * Starting a process inside a pod's namespace: `nsenter --net=<path>` execs the command, so the
 * process id, environment and marker stay those of the container. nsenter must run as root to
 * enter; it switches to the container's account itself (`--setgid`/`--setuid`, which also drops
 * supplementary groups, as spawning with uid/gid does).
 */
export interface Launch {
  argv: string[];
  uid?: number;
  gid?: number;
}

export function enterNamespace(namespacePath: string | undefined, launch: Launch): Launch {
  if (!namespacePath) return launch;
  const account = launch.uid !== undefined ? ['--setgid', String(launch.gid ?? launch.uid), '--setuid', String(launch.uid)] : [];
  return { argv: ['nsenter', `--net=${namespacePath}`, ...account, '--', ...launch.argv] };
}
