import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp, serve } from '../../lib/http.js';
import { capturedLogger } from '../support/log-lines.js';

describe('http helper', () => {
  it('echoes a sane X-Request-ID, replaces a forged one, and logs with reqId', async () => {
    const { logger, lines } = capturedLogger();
    const app = createApp(logger);
    app.get('/hello', (req, res) => {
      req.log?.info({ password: 'hunter2' }, 'handling');
      res.json({ id: req.id });
    });
    const server = await serve(app, { host: '127.0.0.1', port: 0, logger });
    try {
      const given = await fetch(`${server.url}/hello`, { headers: { 'X-Request-ID': 'abc-123' } });
      assert.equal(given.headers.get('x-request-id'), 'abc-123');
      assert.deepEqual(await given.json(), { id: 'abc-123' });
      const forged = await fetch(`${server.url}/hello`, { headers: { 'X-Request-ID': 'bad id\twith spaces' } });
      assert.match(forged.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      await new Promise((r) => setTimeout(r, 20));
      const handling = lines.find((l) => l.msg === 'handling' && l.reqId === 'abc-123');
      assert.ok(handling, 'log line carries the request id');
      assert.equal(handling.password, '[redacted]');
      assert.ok(lines.some((l) => l.msg === 'request' && l.status === 200));
    } finally {
      await server.close();
    }
  });

  it('finishes an in-flight request on close, refuses new connections, and closes within the bound', async () => {
    const { logger } = capturedLogger();
    const app = createApp(logger);
    app.get('/slow', (_req, res) => {
      setTimeout(() => res.send('done'), 300);
    });
    app.get('/hang', () => {
      // never answers: the shutdown bound must cut it
    });
    const server = await serve(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 800 });
    const slow = fetch(`${server.url}/slow`).then((r) => r.text());
    const hang = fetch(`${server.url}/hang`).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const closed = server.close();
    assert.equal(await slow, 'done');
    await assert.rejects(fetch(`${server.url}/slow`));
    await closed;
    assert.equal(await hang, 'cut');
    const took = Date.now() - started;
    assert.ok(took >= 700 && took < 3000, `closed after ${took} ms`);
  });
});
