/**
 * What to do about missing packages, decided without touching the machine: nothing, install them
 * (root on a machine with apt-get), or stop and tell the user the exact command.
 */
export interface Host {
  root: boolean;
  /** apt-get is present (Debian, Ubuntu and their relatives). */
  apt: boolean;
}

export type Decision =
  { action: 'ready' } | { action: 'install'; packages: string[]; command: string } | { action: 'refuse'; packages: string[]; command: string; reason: string };

export function aptCommand(packages: readonly string[], root: boolean): string {
  return `${root ? '' : 'sudo '}apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

export function decide(packages: readonly string[], host: Host, allowInstall: boolean): Decision {
  if (packages.length === 0) return { action: 'ready' };
  const list = [...packages];
  if (!host.apt) {
    return {
      action: 'refuse',
      packages: list,
      command: `install the packages ${list.join(', ')} (their Debian names) with this system's package manager`,
      reason: 'no apt-get on this machine',
    };
  }
  const command = aptCommand(list, host.root);
  if (!host.root) return { action: 'refuse', packages: list, command, reason: 'installing needs root' };
  if (!allowInstall) return { action: 'refuse', packages: list, command, reason: 'installing was not asked for' };
  return { action: 'install', packages: list, command };
}
