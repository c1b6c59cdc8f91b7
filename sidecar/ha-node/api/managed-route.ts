import type { Router } from 'express';
import { HaNodePaths } from '../../../lib/ports.js';
import type { ApiContext } from './context.js';

/**
 * GET /managed: the leader's last pass over spec.roles and the Database objects (per role and
 * per database: applied or the error). 404 on a member that has not kept them (not the leader).
 */
export function managedRoutes(router: Router, context: ApiContext): void {
  router.get(HaNodePaths.managed, (_req, res) => {
    const report = context.managed?.report();
    if (!report) {
      res.status(404).json({ message: 'this member does not keep the managed roles and databases' });
      return;
    }
    res.status(200).json(report);
  });
}
