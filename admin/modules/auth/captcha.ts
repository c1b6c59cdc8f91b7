import { randomInt } from 'node:crypto';
import { KvKeys, KvUnavailableError, type Kv } from '../../cache/kv.js';
import { Code } from '../../http/codes.js';
import { BizError } from '../../http/envelope.js';

export const CAPTCHA_TTL_SECONDS = 300;

/** Stores a fresh 6-digit code for a phone for 5 minutes; a new request replaces the old code. */
export async function issueCaptcha(kv: Kv, phone: string): Promise<string> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await kv.run((r) => r.set(KvKeys.captcha(phone), code, 'EX', CAPTCHA_TTL_SECONDS));
  return code;
}

// Read and delete in one step, so a code works exactly once even under concurrent attempts.
const consumeScript = `
local v = redis.call('GET', KEYS[1])
if v and v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

/** True when the code matches the cached one; the code is then used up. */
export async function consumeCaptcha(kv: Kv, phone: string, code: string): Promise<boolean> {
  const result = await kv.run((r) => r.eval(consumeScript, 1, KvKeys.captcha(phone), code));
  return result === 1;
}

/** Uses up the code or fails with 2402 (also when Redis cannot be asked: no code is accepted unchecked). */
export async function verifyCaptcha(kv: Kv, phone: string, code: string): Promise<void> {
  let ok: boolean;
  try {
    ok = await consumeCaptcha(kv, phone, code);
  } catch (error) {
    if (error instanceof KvUnavailableError) throw new BizError(Code.CAPTCHA_INVALID, 'captcha cannot be checked right now, try again later');
    throw error;
  }
  if (!ok) throw new BizError(Code.CAPTCHA_INVALID, 'captcha wrong or expired');
}
