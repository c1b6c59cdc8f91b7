import type { Request } from 'express';
import { parseGuardedJson } from '../../../lib/json-guard.js';
import type { Reply } from '../ops/texts.js';

/** Largest request body an ha-node endpoint reads; a dynamic configuration is far smaller. */
export const maxBodyBytes = 128 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; reply: Reply };

/**
 * The one body reader of every ha-node JSON endpoint (no express.json()): an oversized body gets
 * 413, bad JSON, nesting beyond the bound, prototype keys and non-finite numbers get 400 naming
 * where, all before any route walks or merges the value. An empty body reads as undefined.
 */
export function readJsonBody(req: Request, limit = maxBodyBytes): Promise<BodyResult> {
  const tooLarge: BodyResult = { ok: false, reply: { code: 413, text: `Request body larger than ${limit} bytes` } };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve(tooLarge);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) return finish(tooLarge);
      chunks.push(chunk);
    });
    req.on('error', () => finish({ ok: false, reply: { code: 400, text: 'Bad request: could not read the body' } }));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (text === '') return finish({ ok: true, value: undefined });
      const parsed = parseGuardedJson(text);
      finish(parsed.ok ? parsed : { ok: false, reply: { code: 400, text: `Bad request: ${parsed.problem}` } });
    });
  });
}
