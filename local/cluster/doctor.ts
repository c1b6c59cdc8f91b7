import { checkRequirements, missingPackages } from '../../lib/prerequisites/check.js';
import { decide } from '../../lib/prerequisites/decide.js';
import { ensurePrerequisites, formatTable, PrerequisitesMissing } from '../../lib/prerequisites/ensure.js';
import { currentHost } from '../../lib/prerequisites/install.js';
import { parsePart, requirementsFor, type Part } from '../../lib/prerequisites/requirements.js';

/**
 * The parts `keelson local up` needs: the pods' programs, and as root the network tools too,
 * since namespace mode is then the default (`--network loopback` does without them).
 */
export function localUpParts(network: string, root = currentHost().root): Part[] {
  return root && network !== 'loopback' ? ['local', 'network'] : ['local'];
}

export function parseParts(value: string): Part[] {
  return [
    ...new Set(
      value
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map(parsePart),
    ),
  ];
}

export interface DoctorFlags {
  for?: string;
  install?: boolean;
  quiet?: boolean;
}

/** `keelson local doctor`: the check as a table; with --install, installs what is missing (root). Returns the exit code. */
export function runDoctor(flags: DoctorFlags, out: (line: string) => void, err: (line: string) => void): number {
  const wanted = flags.for ? parseParts(flags.for) : localUpParts('auto');
  if (flags.install) {
    try {
      const checked = ensurePrerequisites(wanted, { say: out });
      if (!flags.quiet) for (const line of formatTable(checked)) out(line);
      return 0;
    } catch (error) {
      if (error instanceof PrerequisitesMissing) {
        if (!flags.quiet) for (const line of formatTable(checkRequirements(requirementsFor(wanted)))) err(line);
        err(`keelson: ${error.message}`);
        return error.exitCode;
      }
      throw error;
    }
  }
  const checked = checkRequirements(requirementsFor(wanted));
  const packages = missingPackages(checked);
  if (!flags.quiet || packages.length > 0) for (const line of formatTable(checked)) out(line);
  const decision = decide(packages, currentHost(), false);
  if (decision.action === 'ready') return 0;
  err(`keelson: missing ${decision.packages.join(' ')}; run: ${decision.command}${currentHost().root ? ' (or keelson local doctor --install)' : ''}`);
  return 2;
}
