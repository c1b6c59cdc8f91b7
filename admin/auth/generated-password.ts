import { randomInt } from 'node:crypto';

/**
 * Letters and digits only: every stock Soybean login form accepts the result (the older one checks
 * `^\w{6,18}$`, so no `-` or other punctuation), and it survives copying from a log line.
 */
export const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** The longest the older login form allows; 18 of 62 symbols carry about 107 bits. */
export const GENERATED_PASSWORD_LENGTH = 18;

/** A uniformly random password (randomInt draws without modulo bias). */
export function generatePassword(length = GENERATED_PASSWORD_LENGTH): string {
  let password = '';
  for (let i = 0; i < length; i++) password += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return password;
}
