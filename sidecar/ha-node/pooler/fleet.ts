import { lookup } from 'node:dns/promises';
import type { Logger } from '../../../lib/log.js';
import { PoolerPaths } from '../../../lib/ports.js';

/**
 * The poolers of this cluster as ha-node reaches them: each configured entry is "host:port" of the
 * `keelson pooler` control API; a host name resolves to every address behind it (in Kubernetes the
 * headless `<cluster>-pooler-control` Service lists every pooler pod), so pods that come and go
 * are found again at each switchover without any registration.
 */
export interface PoolerFleetOptions {
  entries: string[];
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

export type FleetPause = { ok: true; paused: PausedPooler[]; skipped: string[] } | { ok: false; reason: string };

function splitEntry(entry: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(entry.trim());
  if (!match) throw new Error(`invalid pooler address "${entry}": expected host:port`);
  return { host: match[1]!, port: Number(match[2]) };
}

/** Validates the configured entries (called at start so a typo is a configuration error). */
export function parsePoolerEntries(text: string | undefined): string[] {
  const entries = (text ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) splitEntry(entry);
  return entries;
}

export class PoolerFleet {
  constructor(private readonly options: PoolerFleetOptions) {}

  get configured(): boolean {
    return this.options.entries.length > 0;
  }

  /** Control URLs of every pooler instance right now. */
  async urls(): Promise<string[]> {
    const urls = new Set<string>();
    for (const entry of this.options.entries) {
      const { host, port } = splitEntry(entry);
      const found = await lookup(host, { all: true }).catch(() => []);
      for (const { address, family } of found) urls.add(`http://${family === 6 ? `[${address}]` : address}:${port}`);
    }
    return [...urls].sort();
  }

  private async post(url: string, path: string, body: unknown, timeoutMs: number): Promise<{ status: number; error?: string; pauseId?: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.authorization) headers.authorization = this.options.authorization;
    const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    const parsed = (await response.json().catch(() => ({}))) as { error?: unknown; pauseId?: unknown };
    return { status: response.status, error: typeof parsed.error === 'string' ? parsed.error : undefined, pauseId: typeof parsed.pauseId === 'number' ? parsed.pauseId : undefined };
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

  /** Points every pooler at the new primary, then RESUMEs it (RESUME even when the retarget failed: never leave one paused). */
  async retargetAndResume(poolers: PausedPooler[], host: string, port: number): Promise<void> {
    await Promise.all(
      poolers.map(async (p) => {
        await this.call(p.url, PoolerPaths.target, { host, port });
        await this.call(p.url, PoolerPaths.resume, p.pauseId === undefined ? {} : { pauseId: p.pauseId });
      }),
    );
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

  private async call(url: string, path: string, body: unknown): Promise<void> {
    try {
      const reply = await this.post(url, path, body, this.options.requestTimeoutMs ?? 3000);
      if (reply.status !== 200) this.options.logger.warn({ url, path, status: reply.status, err: reply.error }, 'pooler call failed');
    } catch (error) {
      this.options.logger.warn({ url, path, err: (error as Error).message }, 'pooler unreachable');
    }
  }
}
