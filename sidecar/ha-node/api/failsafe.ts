import type { Router } from 'express';
import { HaNodePaths } from '../../../lib/ports.js';
import { isPlainObject } from '../ops/config-merge.js';
import type { ApiContext } from './context.js';
import { readJsonBody } from './json-body.js';
import { handle, requireAuth, sendReply } from './ops/http.js';

/** A failsafe confirmation carries a name and a few URLs; anything near this size is not one. */
const maxFailsafeBodyBytes = 64 * 1024;

/**
 * GET /failsafe lists the members the leader must reach when the API server is gone (502 when
 * failsafe mode is off); POST /failsafe is how that leader asks a member to confirm it is not
 * a primary. Part of the HA mechanism itself, so it lives with the read side. The POST holds off
 * this member's race for the lock, so, as in Patroni, it needs the API credentials (the members
 * hold them) and is answered only while failsafe mode is on.
 */
export const failsafeRoutes = (router: Router, context: ApiContext): void => {
  router.get(HaNodePaths.failsafe, (_req, res) => {
    const snapshot = context.snapshot();
    const members = snapshot.cluster?.leaderRecord?.failsafe;
    if (!snapshot.config.failsafe_mode || !members) return void res.status(502).type('text/plain').send('Failsafe mode is not enabled');
    res.status(200).json(members);
  });
  router.post(
    HaNodePaths.failsafe,
    requireAuth(context.credentials ?? undefined),
    handle(async (req, res) => {
      if (!context.snapshot().config.failsafe_mode) {
        req.resume();
        return sendReply(res, { code: 502, text: 'Failsafe mode is not enabled' });
      }
      const body = await readJsonBody(req, maxFailsafeBodyBytes);
      if (!body.ok) return sendReply(res, body.reply);
      if (!isPlainObject(body.value)) return sendReply(res, { code: 400, text: 'Bad request: the body must be a JSON object' });
      if (!context.loop) return sendReply(res, { code: 503, text: 'HA loop not running' });
      const answer = context.loop.receiveFailsafe(body.value);
      const status = context.snapshot().status;
      if (answer.status === 200 && status) res.setHeader('lsn', String(Math.max(status.receivedLocation ?? 0, status.replayedLocation ?? 0)));
      sendReply(res, { code: answer.status, text: answer.text });
    }),
  );
};
