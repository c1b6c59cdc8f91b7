import type { ServerResponse } from 'node:http';
import { trimHeapAfterScrape } from '../process/heaptrim.js';
import { familiesOfText, renderExposition, textContentType, type RenderedFamily } from '../text/exposition.js';

/**
 * A scrape's body in two parts: the collectors' text, encoded once when a result changed, and the
 * self and process metrics written for this scrape. Kept apart so a cached scrape neither copies
 * nor re-encodes the bulk of the body (that copy used to be most of the garbage per scrape).
 */
export interface ScrapeBody {
  cached: Buffer;
  fresh: Buffer;
}

export const bodyText = (body: ScrapeBody): string => body.cached.toString('utf8') + body.fresh.toString('utf8');

/** Sends a body as one 200 response with its length, both parts in one write. */
export function sendBody(res: ServerResponse, body: ScrapeBody): void {
  res.writeHead(200, { 'Content-Type': textContentType, 'Content-Length': body.cached.length + body.fresh.length });
  res.cork();
  res.write(body.cached);
  res.end(body.fresh);
  res.uncork();
  trimHeapAfterScrape();
}

function sameFamilies(a: RenderedFamily[], b: RenderedFamily[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const empty = Buffer.alloc(0);

/**
 * Assembles a scrape's body. Collector results are cached as family objects that stay the same
 * objects until the collector runs again, so the collectors' text is rendered only when one of
 * them changed; a cached scrape appends the fresh self and process metrics to the kept text.
 * If a collector emits a family under a self/process metric name, the families must merge, and
 * the whole body goes through the merge instead.
 */
export class BodyAssembler {
  private families: RenderedFamily[] = [];
  private cached = empty;
  private clash = false;

  /** @param reserved names of the families written into `fresh` on every scrape */
  constructor(private readonly reserved: ReadonlySet<string>) {}

  assemble(collected: RenderedFamily[], fresh: Buffer): ScrapeBody {
    if (!sameFamilies(collected, this.families)) {
      this.families = collected;
      this.clash = collected.some((family) => family.lines.length > 0 && this.reserved.has(family.name));
      this.cached = this.clash ? empty : Buffer.from(renderExposition(collected), 'utf8');
    }
    if (this.clash) return { cached: empty, fresh: Buffer.from(renderExposition([...collected, ...familiesOfText(fresh.toString('utf8'))]), 'utf8') };
    return { cached: this.cached, fresh };
  }
}
