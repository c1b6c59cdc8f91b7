import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GENERATED_PASSWORD_LENGTH, PASSWORD_ALPHABET, generatePassword } from '../../../admin/auth/generated-password.js';

describe('generated initial passwords', () => {
  it('every one passes the strictest stock login form (^\\w{6,18}$) and uses letters and digits only', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const password = generatePassword();
      assert.match(password, /^\w{6,18}$/);
      assert.match(password, /^[A-Za-z0-9]{18}$/);
      seen.add(password);
    }
    assert.equal(seen.size, 2000, 'no repeats');
  });

  it('keeps enough entropy: 18 symbols of 62, about 107 bits, and every symbol in use', () => {
    assert.equal(PASSWORD_ALPHABET.length, 62);
    assert.ok(GENERATED_PASSWORD_LENGTH * Math.log2(PASSWORD_ALPHABET.length) > 100, 'over 100 bits');
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) for (const c of generatePassword()) counts.set(c, (counts.get(c) ?? 0) + 1);
    assert.equal(counts.size, 62, 'all 62 symbols appear in 36000 draws');
  });
});
