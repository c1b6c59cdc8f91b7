import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express, { type NextFunction, type Request, type Response } from 'express';
import { staticRoutes } from '../../../admin/http/static-routes.js';
import { serve, type RunningServer } from '../../../lib/http.js';
import { createLogger } from '../../../lib/log.js';

// Exact method + path of a parameterless route is one map lookup; everything else goes on to express
// (ADR 0207). The app answers with which of the two served the request.
describe('admin static route lookup', () => {
  let server: RunningServer;

  before(async () => {
    const app = express();
    const handle =
      (what: string) =>
      async (req: Request, res: Response): Promise<void> => {
        if (req.query.fail) throw new Error('handler failed');
        res.json({ by: what, params: req.params });
      };
    app.use(staticRoutes([{ method: 'post', template: '/api/items/search', handle: handle('lookup') }]));
    app.post('/api/items/search', handle('express'));
    app.get('/api/items/search', handle('express-get'));
    app.use((_req: Request, res: Response) => {
      res.status(404).json({ by: 'not found' });
    });
    app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
      res.json({ error: error.message });
    });
    server = await serve(app, { host: '127.0.0.1', port: 0, logger: createLogger({ name: 'static-routes-test', level: 'silent' }) });
  });
  after(async () => {
    await server?.close();
  });

  const call = async (method: string, path: string): Promise<unknown> => (await fetch(`${server.url}${path}`, { method })).json();

  it('serves the exact method and path, also with a query string', async () => {
    assert.deepEqual(await call('POST', '/api/items/search'), { by: 'lookup', params: {} });
    assert.deepEqual(await call('POST', '/api/items/search?x=1'), { by: 'lookup', params: {} });
  });

  it('leaves other spellings, methods and paths to express', async () => {
    assert.deepEqual(await call('POST', '/api/items/search/'), { by: 'express', params: {} });
    assert.deepEqual(await call('POST', '/API/items/search'), { by: 'express', params: {} });
    assert.deepEqual(await call('GET', '/api/items/search'), { by: 'express-get', params: {} });
    assert.deepEqual(await call('POST', '/api/items'), { by: 'not found' });
  });

  it('hands a failing handler to the error middleware', async () => {
    assert.deepEqual(await call('POST', '/api/items/search?fail=1'), { error: 'handler failed' });
  });

  it('refuses templates with parameters', () => {
    assert.throws(() => staticRoutes([{ method: 'get', template: '/items/{id}', handle: async () => undefined }]), /not a static route/);
  });
});
