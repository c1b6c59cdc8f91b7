import type { Response } from 'express';

/** A response body that is JSON text already (for example a search page rendered by PostgreSQL). */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Sends a JSON body the way `res.json` does (status, `application/json; charset=utf-8`, length) but
 * without express's per-response extras: no ETag (a SHA-1 of every body; API answers are per user
 * and per moment, nobody revalidates them), no content-type reparsing, no freshness check; the
 * body is encoded once and its length taken from that (ADR 0207, 0208). HEAD requests get the headers only (node drops the body).
 */
export function sendJson(res: Response, body: unknown, status = 200): void {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // A Buffer body is written after the header as its own chunk; a string would be joined to the
  // header and copied once more on the V8 heap before the write.
  const bytes = Buffer.from(text);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
