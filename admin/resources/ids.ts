import { createHash } from 'node:crypto';
import Sqids from 'sqids';
import { BizError } from '../http/envelope.js';
import { Code } from '../http/codes.js';

const baseAlphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * A deterministic shuffle of the base alphabet seeded by SECRET_KEY: a Fisher-Yates shuffle driven
 * by a SHA-256 counter stream. Rotating the key changes every public id at once.
 */
export function alphabetFromSecret(secret: string): string {
  const chars = baseAlphabet.split('');
  let block = Buffer.alloc(0);
  let counter = 0;
  let offset = 0;
  const nextByte = (): number => {
    if (offset >= block.length) {
      block = createHash('sha256').update(`keelson-sqids:${counter++}:${secret}`).digest();
      offset = 0;
    }
    return block[offset++];
  };
  for (let i = chars.length - 1; i > 0; i--) {
    const j = ((nextByte() << 8) | nextByte()) % (i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join('');
}

export interface IdCodec {
  encode(id: number): string;
  /** Decodes a public id; throws BizError 1200 naming the field when it is not a canonical id. */
  decode(value: unknown, field?: string): number;
  /** Like decode but returns undefined instead of throwing. */
  tryDecode(value: unknown): number | undefined;
}

export function createIdCodec(secret: string): IdCodec {
  const sqids = new Sqids({ alphabet: alphabetFromSecret(secret), minLength: 8 });
  const cache = new Map<number, string>();
  const encode = (id: number): string => {
    let hit = cache.get(id);
    if (hit === undefined) {
      hit = sqids.encode([id]);
      if (cache.size < 100_000) cache.set(id, hit);
    }
    return hit;
  };
  const tryDecode = (value: unknown): number | undefined => {
    if (typeof value !== 'string' || value.length === 0 || value.length > 32) return undefined;
    let numbers: number[];
    try {
      numbers = sqids.decode(value);
    } catch {
      return undefined;
    }
    if (numbers.length !== 1) return undefined;
    const [id] = numbers;
    // Only the canonical spelling is accepted, so one resource has exactly one public id.
    if (!Number.isSafeInteger(id) || id < 0 || encode(id) !== value) return undefined;
    return id;
  };
  return {
    encode,
    tryDecode,
    decode(value, field = 'id') {
      const id = tryDecode(value);
      if (id === undefined) throw new BizError(Code.VALIDATION, `${field}: invalid id`);
      return id;
    },
  };
}
