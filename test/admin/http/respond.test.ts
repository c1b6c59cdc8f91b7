import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import express, { type NextFunction, type Request, type Response } from 'express';
import { sendJson } from '../../../admin/http/respond.js';
import { serve, type RunningServer } from '../../../lib/http.js';
import { createLogger } from '../../../lib/log.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw HTTP request, so bodies, lengths and encodings are exactly what the test says. */
function send(url: string, method: string, headers: Record<string, string | number>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An app that answers with what the body parser made of the request (or the error's type), through sendJson. */
function echoApp(parser: express.RequestHandler): express.Express {
  const app = express();
  app.post('/echo', parser, (req: Request, res: Response) => sendJson(res, { body: req.body as unknown }));
  app.head('/echo', (_req: Request, res: Response) => sendJson(res, { body: 'head' }));
  app.use((error: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) =>
    sendJson(res, { error: error.type, status: error.status }),
  );
  return app;
}

describe('admin JSON responses', () => {
  const logger = createLogger({ name: 'respond-test', level: 'silent' });
  let server: RunningServer;

  before(async () => {
    server = await serve(echoApp(express.json({ limit: 64, strict: false })), { host: '127.0.0.1', port: 0, logger });
  });
  after(async () => {
    await server?.close();
  });

  const json = 'application/json';

  it('responses carry type and length but no ETag; HEAD gets headers only', async () => {
    const answer = await send(`${server.url}/echo`, 'POST', { 'content-type': json }, '{"é":1}');
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
    assert.equal(answer.headers.etag, undefined);
    const head = await send(`${server.url}/echo`, 'HEAD', {});
    assert.equal(head.text, '');
    assert.equal(Number(head.headers['content-length']), Buffer.byteLength(JSON.stringify({ body: 'head' })));
  });
});
