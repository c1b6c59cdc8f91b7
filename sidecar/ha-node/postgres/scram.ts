import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * SCRAM-SHA-256 password verifiers as PostgreSQL stores them in pg_authid.rolpassword. ha-node
 * computes them itself, so a password never travels in SQL text (which the server may log), and
 * compares a stored verifier with a password without changing anything.
 */

const iterations = 4096;

/** SASLprep as far as passwords need it: non-ASCII spaces become spaces, invisible characters go, then NFKC. */
export function saslPrep(password: string): string {
  return password
    .replace(/[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g, ' ')
    .split('')
    .filter((char) => !mappedToNothing(char.charCodeAt(0)))
    .join('')
    .normalize('NFKC');
}

/** RFC 3454 table B.1: characters SASLprep removes (soft hyphen, joiners, variation selectors, ...). */
function mappedToNothing(code: number): boolean {
  return (
    [0x00ad, 0x034f, 0x1806, 0x2060, 0xfeff].includes(code) ||
    (code >= 0x180b && code <= 0x180d) ||
    (code >= 0x200b && code <= 0x200d) ||
    (code >= 0xfe00 && code <= 0xfe0f)
  );
}

function keys(password: string, salt: Buffer, rounds: number): { storedKey: Buffer; serverKey: Buffer } {
  const salted = pbkdf2Sync(saslPrep(password), salt, rounds, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  return { storedKey: createHash('sha256').update(clientKey).digest(), serverKey: createHmac('sha256', salted).update('Server Key').digest() };
}

/** "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>", the form ALTER ROLE ... PASSWORD accepts pre-hashed. */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16)): string {
  const { storedKey, serverKey } = keys(password, salt, iterations);
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** True when the stored verifier was made from this password (false for md5, empty or malformed values). */
export function verifierMatches(stored: string | null | undefined, password: string): boolean {
  const match = /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(stored ?? '');
  if (!match) return false;
  const rounds = Number(match[1]);
  if (!Number.isSafeInteger(rounds) || rounds < 1 || rounds > 10_000_000) return false;
  const { storedKey, serverKey } = keys(password, Buffer.from(match[2]!, 'base64'), rounds);
  const expectedStored = Buffer.from(match[3]!, 'base64');
  const expectedServer = Buffer.from(match[4]!, 'base64');
  return (
    expectedStored.length === storedKey.length &&
    expectedServer.length === serverKey.length &&
    timingSafeEqual(expectedStored, storedKey) &&
    timingSafeEqual(expectedServer, serverKey)
  );
}
