import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Probe, Requirement } from './requirements.js';

/**
 * Where programs are looked for: PATH, then the sbin folders a non-root PATH often lacks (pgbouncer
 * and nft live there). KEELSON_PREREQUISITES_PATH replaces both, so a test can stand for a machine
 * on which something is missing.
 */
export function searchPath(env: NodeJS.ProcessEnv = process.env): string[] {
  const override = env.KEELSON_PREREQUISITES_PATH;
  if (override !== undefined) return override.split(delimiter).filter(Boolean);
  return [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin'];
}

function accessible(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Where the probe found its target, or undefined. */
export function locate(probe: Probe, dirs: readonly string[]): string | undefined {
  if ('file' in probe) return accessible(probe.file, constants.R_OK) ? probe.file : undefined;
  return dirs.map((dir) => join(dir, probe.program)).find((path) => accessible(path, constants.X_OK));
}

export interface CheckedRequirement {
  requirement: Requirement;
  /** Where it was found; undefined when missing. */
  foundAt?: string;
}

export function checkRequirements(wanted: readonly Requirement[], env: NodeJS.ProcessEnv = process.env): CheckedRequirement[] {
  const dirs = searchPath(env);
  return wanted.map((requirement) => ({ requirement, foundAt: locate(requirement.probe, dirs) }));
}

/** The missing requirements' packages, each once. */
export function missingPackages(checked: readonly CheckedRequirement[]): string[] {
  return [...new Set(checked.filter((c) => !c.foundAt).map((c) => c.requirement.debianPackage))];
}
