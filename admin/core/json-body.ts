import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/** An error shaped like body-parser's, so the error middleware maps it the same way. */
function bodyError(type: string, message: string, status = 400): Error & { type: string; status: number } {
  return Object.assign(new Error(message), { type, status, expose: true });
}

const plainJson = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * JSON request bodies. The common case — `application/json` (UTF-8), no content encoding, a
 * Content-Length within the limit — is read and parsed here with two listeners; everything else
 * (other charsets, gzip/deflate, chunked bodies, oversize or non-JSON types) goes to express.json with
 * the same options, which also gives the errors for those cases. Results and error types match
 * express.json: an empty body is `{}`, a leading BOM is ignored, bad JSON is `entity.parse.failed`
 * (ADR 0207).
 */
export function jsonBody(limit: number): RequestHandler {
  const fallback = express.json({ limit, strict: false });
  return (req: Request, res: Response, next: NextFunction): void => {
    const type = req.headers['content-type'];
    if (type === undefined) return next(); // express.json reads only typed bodies
    const lengthHeader = req.headers['content-length'];
    const length = lengthHeader === undefined ? NaN : Number(lengthHeader);
    if (!plainJson.test(type) || req.headers['content-encoding'] !== undefined || req.headers['transfer-encoding'] !== undefined || !(length >= 0 && length <= limit)) {
      fallback(req, res, next);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    req.once('error', () => next(bodyError('request.aborted', 'request aborted')));
    req.once('end', () => {
      if (received !== length) return next(bodyError('request.size.invalid', 'request size did not match content length'));
      let text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.length === 0) {
        req.body = {};
        return next();
      }
      try {
        req.body = JSON.parse(text) as unknown;
      } catch (error) {
        return next(bodyError('entity.parse.failed', (error as Error).message));
      }
      next();
    });
  };
}
