import { checkRequirements, missingPackages, type CheckedRequirement } from './check.js';
import { decide, type Decision, type Host } from './decide.js';
import { currentHost, installPackages } from './install.js';
import { requirementsFor, type Part } from './requirements.js';

/** Missing prerequisites that this process may not or cannot install: exit code 2 with the command. */
export class PrerequisitesMissing extends Error {
  readonly exitCode = 2;
  constructor(readonly decision: Extract<Decision, { action: 'refuse' }>) {
    super(`missing: ${decision.packages.join(' ')} (${decision.reason}); run: ${decision.command}`);
  }
}

export interface EnsureOptions {
  /** Install what is missing when root on an apt machine (default true). */
  install?: boolean;
  say: (line: string) => void;
  host?: Host;
  env?: NodeJS.ProcessEnv;
}

/**
 * Checks the parts' requirements and, as root with apt-get, installs what is missing (one line
 * names the packages). Throws PrerequisitesMissing otherwise; checks again after installing.
 */
export function ensurePrerequisites(wanted: readonly Part[], options: EnsureOptions): CheckedRequirement[] {
  const list = requirementsFor(wanted);
  const checked = checkRequirements(list, options.env);
  const decision = decide(missingPackages(checked), options.host ?? currentHost(), options.install ?? true);
  if (decision.action === 'ready') return checked;
  if (decision.action === 'refuse') throw new PrerequisitesMissing(decision);
  options.say(`installing what ${wanted.join(' + ')} need${wanted.length === 1 ? 's' : ''}: apt-get install ${decision.packages.join(' ')}`);
  installPackages(decision.packages, options.say);
  const after = checkRequirements(list, options.env);
  const still = after.filter((c) => !c.foundAt).map((c) => c.requirement.name);
  if (still.length > 0) throw new Error(`still missing after installing ${decision.packages.join(' ')}: ${still.join(', ')}`);
  return after;
}

/** The doctor's table: one row per requirement. */
export function formatTable(checked: readonly CheckedRequirement[]): string[] {
  const rows = checked.map((c) => [c.foundAt ? 'ok' : 'MISSING', c.requirement.name, c.requirement.debianPackage, c.foundAt ?? '-', c.requirement.purpose]);
  const header = ['status', 'what', 'package', 'found at', 'needed for'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
