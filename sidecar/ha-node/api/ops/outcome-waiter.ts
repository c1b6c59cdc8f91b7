import type { ClusterView, Dcs } from '../../dcs/types.js';

/**
 * Waits for a condition on the cluster view, re-reading the DCS whenever its watch reports a
 * change and at least every `pollMs` (a lapsed lease raises no event). Replaces Patroni's fixed
 * one-second polling, so a switchover is answered as soon as the new leader holds the lock.
 */
export class ClusterWaiter {
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly dcs: Dcs,
    private readonly pollMs = 250,
  ) {
    dcs.onWake(() => {
      for (const wake of this.wakers) wake();
    });
  }

  async waitFor<T>(check: (cluster: ClusterView) => T | undefined, timeoutMs: number): Promise<T | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const cluster = await this.dcs.getCluster().catch(() => undefined);
      if (cluster) {
        const result = check(cluster);
        if (result !== undefined) return result;
      }
      await this.nextChange(Math.min(this.pollMs, Math.max(0, deadline - Date.now())));
    }
    return undefined;
  }

  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}
