import type { Request, Response, Router } from 'express';
import { HaNodePaths } from '../../../lib/ports.js';
import type { ApiContext } from './context.js';
import { BadQuery, healthStatus, livenessStatus, type Query } from './health-rules.js';
import { nodeDocument } from './node-document.js';
import { withLiveServer } from './server-alive.js';
import { withLiveVolumes } from '../disk/document.js';

/** Answers a health check: JSON document on GET, the status line only on HEAD and OPTIONS. */
export function answerHealth(context: ApiContext, req: Request, res: Response, path: string): void {
  const snapshot = withLiveVolumes(withLiveServer(context.snapshot(), context.serverAlive), context.pg?.settings.dataDir);
  let code: number;
  try {
    code = healthStatus(path, req.query as Query, snapshot);
  } catch (error) {
    if (!(error instanceof BadQuery)) throw error;
    res.status(400).type('text/plain').send(error.message);
    return;
  }
  if (req.method === 'HEAD' || req.method === 'OPTIONS') {
    res.status(code).end();
    return;
  }
  res.status(code).json(nodeDocument(snapshot));
}

/** /liveness (no SQL, loop heartbeat age) and the node document (GET /ha, and /patroni as Patroni serves it). */
export const healthRoutes = (router: Router, context: ApiContext): void => {
  router.all(HaNodePaths.liveness, (req, res) => {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return void res.status(501).type('text/plain').send('Unsupported method');
    // Patroni answers liveness with the status line only, for every method.
    res.status(livenessStatus(context.snapshot())).end();
  });
  router.get([HaNodePaths.ha, HaNodePaths.patroni], (_req, res, next) => {
    // Peers and `ctl` judge WAL positions from this document: read them now, not a cycle ago.
    const snapshot = withLiveVolumes(context.snapshot(), context.pg?.settings.dataDir);
    (context.liveWal ? context.liveWal.refresh(snapshot) : Promise.resolve(snapshot)).then((fresh) => res.status(200).json(nodeDocument(fresh)), next);
  });
  router.options([HaNodePaths.ha, HaNodePaths.patroni], (_req, res) => void res.status(200).end());
};

/** Any other GET/HEAD/OPTIONS is a health check (unknown paths answer 503 with the document). */
export const healthFallback = (router: Router, context: ApiContext): void => {
  router.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return answerHealth(context, req, res, req.path);
    next();
  });
};
