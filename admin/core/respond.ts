import type { Response } from 'express';

/** A response body that is JSON text already (for example a search page rendered by PostgreSQL). */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Sends a JSON body the way `res.json` does (status, `application/json; charset=utf-8`, length) but
 * without express's per-response extras: no ETag (a SHA-1 of every body; API answers are per user
 * and per moment, nobody revalidates them), no content-type reparsing, no freshness check, no
 * buffer copy to measure the body (ADR 0207). HEAD requests get the headers only (node drops the body).
 */
export function sendJson(res: Response, body: unknown, status = 200): void {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
