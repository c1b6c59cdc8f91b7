/**
 * Loopback address pool. Every pod and every Service gets its own address inside one /24 of
 * 127.0.0.0/8 (all of which Linux routes to lo without setup), so pods listen on production ports
 * without clashing. Pods take addresses from .2 upwards, Services from .254 downwards, so the two
 * rarely meet and an address is never handed out twice while in use.
 */
export class AddressPool {
  private readonly used = new Set<number>();

  constructor(
    readonly prefix = '127.0.0',
    private readonly first = 2,
    private readonly last = 254,
    /** `private`: pod addresses of namespace mode, a private /24 that exists only inside the node namespace. */
    scope: 'loopback' | 'private' = 'loopback',
  ) {
    const shape = scope === 'loopback' ? /^127\.\d{1,3}\.\d{1,3}$/ : /^(10|172|192)\.\d{1,3}\.\d{1,3}$/;
    if (!shape.test(prefix) || prefix.split('.').some((p) => Number(p) > 255)) {
      throw new Error(
        `invalid address prefix "${prefix}": expected ${scope === 'loopback' ? '127.X.Y (a /24 inside 127.0.0.0/8)' : 'a private /24 (10.X.Y, 172.16-31.Y or 192.168.Y)'}`,
      );
    }
  }

  /** The host octet of an address in this pool, or undefined when it belongs elsewhere. */
  private octet(ip: string): number | undefined {
    if (!ip.startsWith(`${this.prefix}.`)) return undefined;
    const n = Number(ip.slice(this.prefix.length + 1));
    return Number.isInteger(n) && n >= this.first && n <= this.last ? n : undefined;
  }

  contains(ip: string): boolean {
    return this.octet(ip) !== undefined;
  }

  isUsed(ip: string): boolean {
    const n = this.octet(ip);
    return n !== undefined && this.used.has(n);
  }

  /** Marks an address (e.g. one already recorded in a Service) as taken; false if it was taken or foreign. */
  reserve(ip: string): boolean {
    const n = this.octet(ip);
    if (n === undefined || this.used.has(n)) return false;
    this.used.add(n);
    return true;
  }

  /** Lowest free address for pods, highest free for Services. */
  allocate(from: 'low' | 'high' = 'low'): string {
    const step = from === 'low' ? 1 : -1;
    for (let n = from === 'low' ? this.first : this.last; n >= this.first && n <= this.last; n += step) {
      if (!this.used.has(n)) {
        this.used.add(n);
        return `${this.prefix}.${n}`;
      }
    }
    throw new Error(`address pool ${this.prefix}.${this.first}-${this.last} is exhausted`);
  }

  release(ip: string): void {
    const n = this.octet(ip);
    if (n !== undefined) this.used.delete(n);
  }

  get size(): number {
    return this.used.size;
  }
}
