import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Host } from './decide.js';
import { packagedServices } from './requirements.js';

const policyFile = '/usr/sbin/policy-rc.d';

export function currentHost(): Host {
  return { root: process.getuid?.() === 0, apt: existsSync('/usr/bin/apt-get') };
}

function run(args: readonly string[], logFile: string): void {
  const result = spawnSync(args[0]!, args.slice(1), {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  writeFileSync(logFile, `$ ${args.join(' ')}\n${result.stdout ?? ''}${result.stderr ?? ''}`, { flag: 'a' });
  if (result.error) throw new Error(`${args[0]}: ${result.error.message}`);
  if (result.status !== 0) {
    const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-8).join('\n');
    throw new Error(`${args.join(' ')} exited with ${result.status}:\n${tail}`);
  }
}

/**
 * Installs Debian packages as root. Packaged services are kept from starting while it runs (the
 * policy-rc.d convention), since Keelson and its tests start their own servers on their own ports;
 * any already running are stopped afterwards. apt's output goes to a log, shown on failure.
 */
export function installPackages(packages: readonly string[], say: (line: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-apt-'));
  const logFile = join(dir, 'apt.log');
  const ownPolicy = !existsSync(policyFile);
  try {
    if (ownPolicy) writeFileSync(policyFile, '#!/bin/sh\n# written by keelson while it installs packages\nexit 101\n', { mode: 0o755 });
    run(['apt-get', 'update', '-qq'], logFile);
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages], logFile);
  } finally {
    if (ownPolicy) rmSync(policyFile, { force: true });
  }
  for (const service of packagedServices) spawnSync('service', [service, 'stop'], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
  say(`installed ${packages.join(' ')}`);
}
