import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HaNodePaths } from '../../../lib/ports.js';

/**
 * The listener's handler from the first moment ha-node listens: while the member is still
 * starting (waiting for its certificates, as PostgreSQL waits for them before its first start)
 * /liveness answers 200, so the kubelet does not kill a pod that waits; every other request gets
 * 503. Once the app exists every request goes to it.
 */
export class StartingHandler {
  private app: RequestListener | undefined;

  readonly handler: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    if (this.app) return void this.app(req, res);
    const path = (req.url ?? '/').split('?')[0];
    const alive = path === HaNodePaths.liveness && ['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? '');
    res.writeHead(alive ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : 'ha-node is starting\n');
  };

  use(app: RequestListener): void {
    this.app = app;
  }
}
