import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import express, { type NextFunction, type Request, type Response } from 'express';
import { jsonBody } from '../../admin/core/json-body.js';
import { sendJson } from '../../admin/core/respond.js';
import { serve, type RunningServer } from '../../lib/http.js';
import { createLogger } from '../../lib/log.js';

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

/** An app that answers with what its body parser made of the request (or the error's type). */
function echoApp(parser: express.RequestHandler): express.Express {
  const app = express();
  app.post('/echo', parser, (req: Request, res: Response) => sendJson(res, { body: req.body as unknown }));
  app.head('/echo', (_req: Request, res: Response) => sendJson(res, { body: 'head' }));
  app.use((error: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => sendJson(res, { error: error.type, status: error.status }));
  return app;
}

// The admin reads JSON bodies itself in the common case and leaves the rest to express.json (ADR 0207):
// for every kind of request both must give the same result.
describe('admin JSON bodies and responses', () => {
  const logger = createLogger({ name: 'json-body-test', level: 'silent' });
  let ours: RunningServer;
  let theirs: RunningServer;

  before(async () => {
    ours = await serve(echoApp(jsonBody(64)), { host: '127.0.0.1', port: 0, logger });
    theirs = await serve(echoApp(express.json({ limit: 64, strict: false })), { host: '127.0.0.1', port: 0, logger });
  });
  after(async () => {
    await ours?.close();
    await theirs?.close();
  });

  const json = 'application/json';
  const cases: [string, Record<string, string | number>, Buffer | string | undefined][] = [
    ['an object', { 'content-type': json }, '{"current":1,"user_name":"ü"}'],
    ['a scalar (not strict)', { 'content-type': json }, '"text"'],
    ['charset utf-8', { 'content-type': 'application/json; charset=UTF-8' }, '[1,2]'],
    ['an empty body', { 'content-type': json, 'content-length': 0 }, ''],
    ['a leading BOM', { 'content-type': json }, '\uFEFF{"a":1}'],
    ['bad JSON', { 'content-type': json }, '{"a":'],
    ['an oversize body', { 'content-type': json }, JSON.stringify({ text: 'x'.repeat(100) })],
    ['a gzip body', { 'content-type': json, 'content-encoding': 'gzip' }, gzipSync('{"zipped":true}')],
    ['latin1', { 'content-type': 'application/json; charset=latin1' }, Buffer.from('{"n":"\xe9"}', 'latin1')],
    ['a chunked body', { 'content-type': json, 'transfer-encoding': 'chunked' }, '{"chunked":true}'],
    ['another type', { 'content-type': 'text/plain' }, '{"a":1}'],
    ['no body', {}, undefined],
  ];
  for (const [name, headers, body] of cases) {
    it(`${name}: the same result as express.json`, async () => {
      const [mine, reference] = await Promise.all([send(`${ours.url}/echo`, 'POST', headers, body), send(`${theirs.url}/echo`, 'POST', headers, body)]);
      assert.equal(mine.text, reference.text);
      assert.equal(mine.status, 200);
    });
  }

  it('reads bodies that arrive in several chunks', async () => {
    const text = JSON.stringify({ list: Array.from({ length: 5 }, (_, i) => i) });
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = request(`${ours.url}/echo`, { method: 'POST', headers: { 'content-type': json, 'content-length': Buffer.byteLength(text) } }, (res) => {
        let out = '';
        res.on('data', (c: Buffer) => (out += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: out }));
      });
      req.on('error', reject);
      req.write(text.slice(0, 7));
      setTimeout(() => req.end(text.slice(7)), 20);
    });
    assert.deepEqual(JSON.parse(answer.text), { body: { list: [0, 1, 2, 3, 4] } });
  });

  it('responses carry type and length but no ETag; HEAD gets headers only', async () => {
    const answer = await send(`${ours.url}/echo`, 'POST', { 'content-type': json }, '{"é":1}');
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
    assert.equal(answer.headers.etag, undefined);
    const head = await send(`${ours.url}/echo`, 'HEAD', {});
    assert.equal(head.text, '');
    assert.equal(Number(head.headers['content-length']), Buffer.byteLength(JSON.stringify({ body: 'head' })));
  });
});
