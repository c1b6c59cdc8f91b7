import type { Router } from 'express';
import { HaNodePaths } from '../../../../lib/ports.js';
import type { ApiCredentials } from '../../../../api/ha-node/credentials.js';
import { isPaused } from '../../ops/loop-decisions.js';
import { parseReinitializeRequest } from '../../ops/reinitialize-request.js';
import { parseRestartRequest } from '../../ops/restart-request.js';
import type { ApiContext } from '../context.js';
import { readJsonBody } from '../json-body.js';
import { handle, requireAuth, sendReply } from './http.js';
import { NodeOperations } from './node-operations.js';

/** POST/DELETE /restart, POST /reload, POST /reinitialize, GET /restart (the scheduled restart, if any). */
export function restartRoutes(credentials: ApiCredentials | undefined) {
  return (router: Router, context: ApiContext): void => {
    const loop = context.loop;
    const operations = new NodeOperations(
      context.pg,
      () => context.snapshot(),
      (reason) => context.wake(reason),
      context.logger.child({ component: 'ops' }),
      loop ? (name, fn) => loop.runExclusive(name, fn) : undefined,
    );
    // Pause lives in the dynamic configuration; read it fresh, the loop's view may be a cycle old.
    const paused = async (): Promise<boolean> => isPaused((await context.dcs.getCluster().catch(() => context.snapshot().cluster))?.config);

    router.post(
      HaNodePaths.restart,
      requireAuth(credentials),
      handle(async (req, res) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        const parsed = parseRestartRequest(body.value, await paused(), new Date());
        if (!parsed.ok) return sendReply(res, parsed.reply);
        const request = parsed.request;
        if (request.schedule) return sendReply(res, operations.schedule(request, request.schedule.at));
        sendReply(res, await operations.restart(request));
      }),
    );
    router.delete(HaNodePaths.restart, requireAuth(credentials), (_req, res) => sendReply(res, operations.cancelScheduled()));
    router.get(HaNodePaths.restart, (_req, res) => {
      const scheduled = operations.scheduledRestart();
      if (!scheduled) return sendReply(res, { code: 404, text: 'no restarts are scheduled' });
      res.status(200).json({
        schedule: scheduled.schedule?.iso,
        ...(scheduled.role ? { role: scheduled.role } : {}),
        ...(scheduled.dbVersion !== undefined ? { db_version: scheduled.dbVersion } : {}),
        ...(scheduled.restartPending !== undefined ? { restart_pending: scheduled.restartPending } : {}),
      });
    });

    router.post(
      HaNodePaths.reload,
      requireAuth(credentials),
      handle(async (req, res) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        sendReply(res, await operations.reload());
      }),
    );

    router.post(
      HaNodePaths.reinitialize,
      requireAuth(credentials),
      handle(async (req, res) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        const parsed = parseReinitializeRequest(body.value);
        if (!parsed.ok) return sendReply(res, parsed.reply);
        const cluster = await context.dcs.getCluster().catch(() => context.snapshot().cluster);
        sendReply(res, await operations.reinitialize(Boolean(cluster?.leader)));
      }),
    );
  };
}
