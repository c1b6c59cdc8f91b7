import { describeApiError } from '../../../../lib/kube/client.js';
import type { Dcs, DynamicConfig } from '../../dcs/types.js';
import { findUnsafeJson } from '../../../../lib/json-guard.js';
import { mergePatch, sameDocument, withoutNulls, type JsonObject } from '../../ops/config-merge.js';
import type { ConfigProblem } from '../../ops/config-problem.js';
import { changedParameters, describeProblems, validateDynamicConfig, type ValidationContext } from '../../ops/config-validate.js';
import type { ParameterValue } from '../../postgres/conf.js';
import type { Reply } from '../../ops/texts.js';

/** Checks parameter values against the server's own rules (pg_settings); problems name db.parameters.<name>. */
export type ParameterCheck = (parameters: Record<string, ParameterValue>) => Promise<ConfigProblem[]>;

/** How often a PATCH/PUT re-reads, re-merges and re-validates after losing a compare-and-swap. */
export const configCasAttempts = 5;

export type ConfigWriteOutcome =
  { ok: true; config: JsonObject; changed: boolean; attempts: number } | { ok: false; reply: Reply; attempts: number; fields?: string[]; error?: string };

/**
 * PATCH or PUT of the dynamic configuration as a compare-and-swap loop: read the stored document
 * and its version, merge, validate, write only if the version is unchanged; on a conflict start
 * over from a fresh read (a concurrent PATCH of another key is then merged, not overwritten).
 * After `configCasAttempts` lost races: 409. The API server unreachable: 503.
 */
export async function writeConfigWithCas(
  dcs: Dcs,
  mode: 'patch' | 'put',
  change: JsonObject,
  attempts = configCasAttempts,
  serverCheck?: ParameterCheck,
  member: ValidationContext = {},
): Promise<ConfigWriteOutcome> {
  const refusal = refuseChange(mode, change);
  if (refusal) return { ok: false, reply: { code: 400, text: `Bad request: ${refusal}` }, attempts: 0, fields: [] };
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    let cluster;
    try {
      cluster = await dcs.getCluster();
    } catch (error) {
      return { ok: false, reply: { code: 503, text: 'DCS is not accessible' }, attempts: attempt, error: describeApiError(error) };
    }
    if (mode === 'patch' && !cluster.config) return { ok: false, reply: { code: 503, text: 'no dynamic configuration stored yet' }, attempts: attempt };
    const stored = (cluster.config ?? {}) as JsonObject;
    const next = mode === 'patch' ? mergePatch(stored, change) : withoutNulls(change);
    const problems = validateDynamicConfig(next, change, member);
    // Only values this request changes: one stored before these checks existed must not block every PATCH.
    if (problems.length === 0 && serverCheck) problems.push(...(await serverCheck(changedParameters(stored, next))));
    if (problems.length > 0) {
      return { ok: false, reply: { code: 400, text: describeProblems(problems) }, attempts: attempt, fields: problems.map((p) => p.field) };
    }
    if (sameDocument(stored, next)) return { ok: true, config: next, changed: false, attempts: attempt };
    let written: boolean;
    try {
      written = await dcs.setConfig(next as DynamicConfig, { expectedVersion: cluster.configVersion ?? '' });
    } catch (error) {
      return { ok: false, reply: { code: 503, text: 'failed to write the configuration into the DCS' }, attempts: attempt, error: describeApiError(error) };
    }
    if (written) return { ok: true, config: next, changed: true, attempts: attempt };
  }
  return {
    ok: false,
    reply: { code: 409, text: `the configuration changed concurrently ${attempts} times while applying this request; nothing was written, retry` },
    attempts,
  };
}

/**
 * What no merge may see, checked here as well as by the body reader since this is where JSON is
 * merged: prototype keys, non-finite numbers, runaway nesting; and a PUT that would leave no
 * configuration at all (every value null), which would wipe the cluster's settings.
 */
function refuseChange(mode: 'patch' | 'put', change: JsonObject): string | undefined {
  const unsafe = findUnsafeJson(change);
  if (unsafe) return unsafe;
  if (mode === 'put' && Object.keys(withoutNulls(change)).length === 0) return 'PUT /config would leave an empty configuration';
  return undefined;
}
