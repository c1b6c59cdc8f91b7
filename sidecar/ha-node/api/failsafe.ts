import express, { type Router } from 'express';
import { HaNodePaths } from '../../../lib/ports.js';
import type { ApiContext } from './context.js';

/**
 * GET /failsafe lists the members the leader must reach when the API server is gone (502 when
 * failsafe mode is off); POST /failsafe is how that leader asks a member to confirm it is not
 * a primary. Part of the HA mechanism itself, so it lives with the read side.
 */
export const failsafeRoutes = (router: Router, context: ApiContext): void => {
  router.get(HaNodePaths.failsafe, (_req, res) => {
    const snapshot = context.snapshot();
    const members = snapshot.cluster?.leaderRecord?.failsafe;
    if (!snapshot.config.failsafe_mode || !members) return void res.status(502).type('text/plain').send('Failsafe mode is not enabled');
    res.status(200).json(members);
  });
  router.post(HaNodePaths.failsafe, express.json({ limit: '64kb' }), (req, res) => {
    const body: unknown = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return void res.status(400).type('text/plain').send('a JSON object is required');
    if (!context.loop) return void res.status(503).type('text/plain').send('HA loop not running');
    const answer = context.loop.receiveFailsafe(body as { name?: unknown });
    const status = context.snapshot().status;
    if (answer.status === 200 && status) res.setHeader('lsn', String(Math.max(status.receivedLocation ?? 0, status.replayedLocation ?? 0)));
    res.status(answer.status).type('text/plain').send(answer.text);
  });
};
