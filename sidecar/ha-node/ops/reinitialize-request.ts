import { isPlainObject } from './config-merge.js';
import type { Reply } from './texts.js';

/** A validated POST /reinitialize body (Patroni's keys). */
export interface ReinitializeRequest {
  /** Go ahead even when the node is busy recovering a failed database. */
  force: boolean;
  /** Take the base backup from the leader rather than from any replica. */
  fromLeader: boolean;
}

export type ParsedReinitialize = { ok: true; request: ReinitializeRequest } | { ok: false; reply: Reply };

const flags = { force: 'force', 'from-leader': 'fromLeader' } as const;

/** An absent body means no options; each key must be a JSON boolean, unknown keys are refused. */
export function parseReinitializeRequest(body: unknown): ParsedReinitialize {
  const request: ReinitializeRequest = { force: false, fromLeader: false };
  if (body === undefined || body === null) return { ok: true, request };
  if (!isPlainObject(body)) return fail('the body must be a JSON object');
  for (const [key, value] of Object.entries(body)) {
    if (!Object.hasOwn(flags, key)) return fail(`"${key}" is not a known option (force, from-leader)`);
    if (typeof value !== 'boolean') return fail(`"${key}" must be true or false (got ${JSON.stringify(value)})`);
    request[flags[key as keyof typeof flags]] = value;
  }
  return { ok: true, request };
}

function fail(text: string): ParsedReinitialize {
  return { ok: false, reply: { code: 400, text: `Bad request: ${text}` } };
}
