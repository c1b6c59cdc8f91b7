import argon2 from 'argon2';

export interface PasswordSettings {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export interface PasswordHasher {
  hash(plain: string): Promise<string>;
  verify(hash: string, plain: string): Promise<boolean>;
  /** A hash of nothing in particular, verified against when the user is unknown so timing does not reveal it. */
  dummyHash(): Promise<string>;
}

/** Argon2id with configurable cost; verification reads the parameters stored in each hash. */
export function createPasswordHasher(settings: PasswordSettings): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const hash = (plain: string): Promise<string> =>
    argon2.hash(plain, { type: argon2.argon2id, memoryCost: settings.memoryCost, timeCost: settings.timeCost, parallelism: settings.parallelism });
  return {
    hash,
    async verify(stored, plain) {
      try {
        return await argon2.verify(stored, plain);
      } catch {
        return false;
      }
    },
    dummyHash: () => (dummy ??= hash('keelson-dummy-password')),
  };
}
