import { isPlainObject } from './config-merge.js';
import { parseSchedule } from './schedule.js';
import { reply, type ManualAction, type Reply } from './texts.js';

/** A validated POST /switchover or /failover body. */
export interface FailoverRequest {
  /** The effective action: /failover with a leader is treated as a switchover. */
  action: ManualAction;
  leader?: string;
  candidate?: string;
  scheduledAt?: { at: Date; iso: string };
}

export type ParsedRequest = { ok: true; request: FailoverRequest } | { ok: false; reply: Reply };

function optionalName(value: unknown): string | undefined | false {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : false;
}

/**
 * The body checks of Patroni's do_POST_failover, in its order (the first failure wins), before
 * any look at the cluster. `paused` is the cluster's pause flag.
 */
export function parseFailoverRequest(endpoint: ManualAction, body: unknown, paused: boolean, now: Date): ParsedRequest {
  if (!isPlainObject(body) || Object.keys(body).length === 0) return fail(400, 'Bad request: the body must be a non-empty JSON object');
  const leader = optionalName(body.leader);
  const candidate = optionalName(body.candidate ?? body.member);
  if (leader === false) return fail(400, 'Bad request: "leader" must be a string');
  if (candidate === false) return fail(400, 'Bad request: "candidate" must be a string');
  const scheduled = body.scheduled_at;
  const hasSchedule = scheduled !== undefined && scheduled !== null && scheduled !== '';

  if (endpoint === 'failover' && !candidate) return fail(400, 'Failover could be performed only to a specific candidate');
  if (endpoint === 'switchover' && !leader) return fail(400, 'Switchover could be performed only from a specific leader');
  if (endpoint === 'failover' && hasSchedule) return fail(400, "Failover can't be scheduled");

  let scheduledAt: FailoverRequest['scheduledAt'];
  if (hasSchedule) {
    if (paused) return fail(400, "Can't schedule switchover in the paused state");
    const parsed = parseSchedule(scheduled, now);
    if (!parsed.ok) return fail(parsed.code, parsed.message);
    scheduledAt = { at: parsed.at, iso: parsed.iso };
  }
  if (paused && !candidate) return fail(400, 'Switchover is possible only to a specific candidate in a paused state');
  if (leader && candidate && leader === candidate) return fail(400, 'Switchover target and source are the same');
  const action: ManualAction = endpoint === 'failover' && leader ? 'switchover' : endpoint;
  return { ok: true, request: { action, leader, candidate, scheduledAt } };
}

function fail(code: number, text: string): ParsedRequest {
  return { ok: false, reply: reply(code, text) };
}
