import { lookup } from 'node:dns/promises';
import type { Logger } from '../../../lib/log.js';
import { PoolerPaths } from '../../../lib/ports.js';

/**
 * The poolers of this cluster as ha-node reaches them, found again at every call so pods that
 * come and go need no registration: the addresses of the cluster's pooler pods as the Kubernetes
 * API reports them (`podAddresses`, with their control port), and configured "host:port" entries
 * of the `keelson pooler` control API, a host name resolving to every address behind it.
 */
export interface PoolerFleetOptions {
  entries: string[];
  /** The pooler pods' addresses now (the watched pod list) and the port of their control API. */
  pods?: { addresses: () => string[]; controlPort: number };
  authorization?: string;
  logger: Logger;
  /** Per-request bound for calls other than PAUSE. */
  requestTimeoutMs?: number;
}

/** A pooler this member paused, with the id of its pause (a RESUME carrying it ends only that pause). */
export interface PausedPooler {
  url: string;
  pauseId?: number;
}

/** What a pooler reports about itself (GET /state). */
export interface PoolerState {
  answered: true;
  paused: boolean;
  target: { host: string; port: number };
  /** Its PostgreSQL server accepts connections. */
  reachable: boolean;
}

/** One pooler in a listing: its control URL and its state, or `answered: false`; `readOnly` for a read-only pooler. */
export type PoolerReport = { url: string; readOnly?: boolean } & (PoolerState | { answered: false });

export type FleetPause = { ok: true; paused: PausedPooler[]; skipped: string[] } | { ok: false; reason: string };

function splitEntry(entry: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(entry.trim());
  if (!match) throw new Error(`invalid pooler address "${entry}": expected host:port`);
  return { host: match[1]!, port: Number(match[2]) };
}

/** Validates the configured entries (called at start so a typo is a configuration error). */
export function parsePoolerEntries(text: string | undefined): string[] {
  const entries = (text ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) splitEntry(entry);
  return entries;
}

export class PoolerFleet {
  constructor(private readonly options: PoolerFleetOptions) {}

  get configured(): boolean {
    return this.options.entries.length > 0 || this.options.pods !== undefined;
  }

  /** Control URLs of every pooler instance right now. */
  async urls(): Promise<string[]> {
    const urls = new Set<string>();
    const pods = this.options.pods;
    for (const address of pods?.addresses() ?? []) urls.add(`http://${address.includes(':') ? `[${address}]` : address}:${pods!.controlPort}`);
    for (const entry of this.options.entries) {
      const { host, port } = splitEntry(entry);
      const found = await lookup(host, { all: true }).catch(() => []);
      for (const { address, family } of found) urls.add(`http://${family === 6 ? `[${address}]` : address}:${port}`);
    }
    return [...urls].sort();
  }

  private async post(
    url: string,
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<{ status: number; error?: string; pauseId?: number; resumeMs?: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.authorization) headers.authorization = this.options.authorization;
    const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const parsed = (await response.json().catch(() => ({}))) as { error?: unknown; pauseId?: unknown; resumeMs?: unknown };
    const numberOr = (value: unknown) => (typeof value === 'number' ? value : undefined);
    return {
      status: response.status,
      error: typeof parsed.error === 'string' ? parsed.error : undefined,
      pauseId: numberOr(parsed.pauseId),
      resumeMs: numberOr(parsed.resumeMs),
    };
  }

  /**
   * PAUSEs every pooler, each bounded by `timeoutMs`. A pooler that cannot pause in time fails the
   * whole step: every pooler is RESUMEd and the reason returned. A pooler that cannot be reached
   * at all is skipped (it serves no one we could protect, and starts unpaused when it returns).
   */
  async pauseAll(timeoutMs: number, holdMs: number): Promise<FleetPause> {
    const urls = await this.urls();
    const outcomes = await Promise.all(
      urls.map(async (url) => {
        try {
          const reply = await this.post(url, PoolerPaths.pause, { timeoutMs, holdMs }, timeoutMs + 3000);
          return { url, ...reply };
        } catch (error) {
          return { url, status: 0, error: (error as Error).message };
        }
      }),
    );
    const failed = outcomes.filter((o) => o.status !== 0 && o.status !== 200);
    const skipped = outcomes.filter((o) => o.status === 0).map((o) => o.url);
    if (skipped.length) this.options.logger.warn({ skipped }, 'poolers unreachable; switching over without pausing them');
    if (failed.length) {
      await this.resumeAll(outcomes.map((o) => ({ url: o.url, pauseId: o.pauseId })));
      return { ok: false, reason: failed.map((o) => `pooler ${o.url}: ${o.error ?? `HTTP ${o.status}`}`).join('; ') };
    }
    return { ok: true, paused: outcomes.filter((o) => o.status === 200).map((o) => ({ url: o.url, pauseId: o.pauseId })), skipped };
  }

  async resumeAll(poolers: PausedPooler[]): Promise<void> {
    await Promise.all(poolers.map((p) => this.call(p.url, PoolerPaths.resume, p.pauseId === undefined ? {} : { pauseId: p.pauseId })));
  }

  /**
   * Points every pooler at the new primary, then RESUMEs it (RESUME even when the retarget failed:
   * never leave one paused). One call per pooler (retarget with `resumePauseId`); a pooler that
   * does not know the combined call (400, an older version) gets the two calls. Returns the
   * slowest pooler's repoint (the call up to its RELOAD) and RESUME times (ms).
   */
  async retargetAndResume(poolers: PausedPooler[], host: string, port: number): Promise<{ repointMs: number; resumeMs: number }> {
    const steps = await Promise.all(
      poolers.map(async (p) => {
        const startedAt = performance.now();
        if (p.pauseId !== undefined) {
          const reply = await this.post(p.url, PoolerPaths.target, { host, port, resumePauseId: p.pauseId }, this.options.requestTimeoutMs ?? 3000).catch(
            (error: Error) => ({ status: 0, error: error.message, resumeMs: undefined }),
          );
          const resumeMs = reply.resumeMs ?? 0;
          const timings = { repointMs: performance.now() - startedAt - resumeMs, resumeMs };
          if (reply.status === 200) return timings;
          if (reply.status !== 400) {
            // 409: a newer pause holds it (its own switchover resumes it); 0: unreachable, it starts unpaused.
            this.options.logger.warn({ url: p.url, status: reply.status, err: reply.error }, 'pooler retarget and resume failed');
            return timings;
          }
        }
        await this.call(p.url, PoolerPaths.target, { host, port });
        const repointedAt = performance.now();
        await this.call(p.url, PoolerPaths.resume, p.pauseId === undefined ? {} : { pauseId: p.pauseId });
        return { repointMs: repointedAt - startedAt, resumeMs: performance.now() - repointedAt };
      }),
    );
    return { repointMs: Math.max(0, ...steps.map((s) => s.repointMs)), resumeMs: Math.max(0, ...steps.map((s) => s.resumeMs)) };
  }

  /**
   * Points every pooler at this member after it promoted (no pause: an unplanned failover has no
   * moment to prepare). Without it a pooler retargeted at an earlier primary would keep that
   * address after the primary died.
   */
  async retargetAll(host: string, port: number): Promise<void> {
    const urls = await this.urls();
    await Promise.all(urls.map((url) => this.call(url, PoolerPaths.target, { host, port })));
  }

  /**
   * Points every pooler that is not already there at this primary (run by the primary every
   * cycle): a pooler that restarted during or after a switchover, or that could not be reached at
   * the time, follows the primary within a cycle instead of waiting for the -rw Service.
   */
  async alignTargets(host: string, port: number): Promise<number> {
    const urls = await this.urls();
    const moved = await Promise.all(
      urls.map(async (url) => {
        const state = await this.state(url);
        if (!state || (state.target.host === host && state.target.port === port)) return false;
        await this.call(url, PoolerPaths.target, { host, port });
        return true;
      }),
    );
    return moved.filter(Boolean).length;
  }

  /** Points one pooler at host:port (a failure is logged, not thrown). */
  async pointAt(url: string, host: string, port: number): Promise<void> {
    await this.call(url, PoolerPaths.target, { host, port });
  }

  /** Every pooler's state now; one that does not answer is listed with `reachable: undefined` and no state. */
  async states(): Promise<PoolerReport[]> {
    const urls = await this.urls();
    return Promise.all(urls.map(async (url) => ({ url, ...((await this.state(url)) ?? { answered: false as const }) })));
  }

  /** One pooler's state, or undefined when it cannot be read. */
  async state(url: string): Promise<PoolerState | undefined> {
    try {
      const headers: Record<string, string> = this.options.authorization ? { authorization: this.options.authorization } : {};
      const response = await fetch(`${url}${PoolerPaths.state}`, { headers, signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 3000) });
      if (response.status !== 200) return undefined;
      const body = (await response.json()) as { paused?: unknown; target?: { host?: unknown; port?: unknown }; reachable?: unknown };
      if (typeof body.paused !== 'boolean' || typeof body.target?.host !== 'string' || typeof body.target.port !== 'number') return undefined;
      return { answered: true, paused: body.paused, target: { host: body.target.host, port: body.target.port }, reachable: body.reachable === true };
    } catch {
      return undefined;
    }
  }

  private async call(url: string, path: string, body: unknown): Promise<void> {
    try {
      const reply = await this.post(url, path, body, this.options.requestTimeoutMs ?? 3000);
      if (reply.status !== 200) this.options.logger.warn({ url, path, status: reply.status, err: reply.error }, 'pooler call failed');
    } catch (error) {
      this.options.logger.warn({ url, path, err: (error as Error).message }, 'pooler unreachable');
    }
  }
}
