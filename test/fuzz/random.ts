/**
 * A small seeded generator (mulberry32), so a fuzz campaign is reproducible from its seed: request
 * number i of a campaign is drawn from its own stream (seed, i) and can be replayed alone.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The stream of request number index in the campaign of seed. */
  static forRequest(seed: number, index: number): Random {
    return new Random(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** A string of length characters drawn from alphabet. */
  text(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-_'): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}

/** A fresh seed for a campaign: FUZZ_SEED when set (to replay one), else random. */
export function campaignSeed(): number {
  const fixed = process.env.FUZZ_SEED;
  if (fixed !== undefined && fixed !== '') return Number(fixed) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
