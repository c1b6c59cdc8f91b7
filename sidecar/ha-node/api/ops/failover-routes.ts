import type { Request, Response, Router } from 'express';
import { describeApiError } from '../../../../lib/kube/client.js';
import { HaNodePaths } from '../../../../lib/ports.js';
import { askPeers } from '../../ha/election/peers.js';
import type { ApiCredentials } from '../../../../api/ha-node/credentials.js';
import { candidatePool, chooseCandidate, synchronousModeOf, type EligibilityConfig } from '../../ops/eligibility.js';
import { failoverOutcome, outcomeTimeoutSeconds, statusUnknown } from '../../ops/failover-outcome.js';
import { parseFailoverRequest } from '../../ops/failover-request.js';
import { isPaused } from '../../ops/loop-decisions.js';
import { quorumVerdict } from '../../ops/quorum-race.js';
import type { ManualAction } from '../../ops/texts.js';
import type { ApiContext } from '../context.js';
import { readJsonBody } from '../json-body.js';
import { handle, requireAuth, sendReply } from './http.js';
import { ClusterWaiter } from './outcome-waiter.js';

export interface FailoverRouteOptions {
  /** Timeout for asking each candidate's API during the eligibility check. */
  peerTimeoutMs?: number;
  /** Overrides 2*max(10, loop_wait) seconds (tests). */
  outcomeTimeoutMs?: number;
}

/** POST /switchover, POST /failover, DELETE /switchover. */
export function failoverRoutes(credentials: ApiCredentials | undefined, options: FailoverRouteOptions = {}) {
  return (router: Router, context: ApiContext): void => {
    const waiter = new ClusterWaiter(context.dcs);

    const manual = (endpoint: ManualAction) =>
      handle(async (req: Request, res: Response) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        const cluster = await context.dcs.getCluster().catch(() => undefined);
        if (!cluster) return sendReply(res, { code: 503, text: 'DCS is not accessible' });
        const parsed = parseFailoverRequest(endpoint, body.value, isPaused(cluster.config), new Date());
        if (!parsed.ok) return sendReply(res, parsed.reply);
        const request = parsed.request;
        const effective = context.snapshot().config;
        const config: EligibilityConfig = {
          synchronousMode: synchronousModeOf(cluster.config?.synchronous_mode ?? (effective.synchronous_mode ? 'on' : 'off')),
          maximumLagOnFailover: effective.maximum_lag_on_failover,
          checkTimeline: effective.check_timeline,
        };
        const pool = candidatePool(request, cluster, config);
        if (!pool.ok) return sendReply(res, pool.reply);
        const peers = await askPeers(pool.members, options.peerTimeoutMs ?? 2000, context.peerTls);
        const choice = chooseCandidate(request, peers, cluster, config);
        if (!choice.ok) return sendReply(res, choice.reply);
        // Quorum commit without a leader: nobody hands over cleanly, so the candidate must prove
        // now that it holds every acknowledged commit (the race checks it again).
        if (!cluster.leader && cluster.sync?.quorum !== undefined) {
          const voters = cluster.members.filter((m) => cluster.sync!.sync_standby.includes(m.name) && m.name !== choice.candidate);
          const votes = await askPeers(voters, options.peerTimeoutMs ?? 2000, context.peerTls);
          const self = { name: choice.candidate, walPosition: peers.find((p) => p.name === choice.candidate)?.walPosition ?? 0 };
          const proof = quorumVerdict(self, cluster.sync, votes);
          if (!proof.ok)
            return sendReply(res, {
              code: 412,
              text: `${request.action} is not possible: ${choice.candidate} cannot prove it has every acknowledged commit (${proof.reason})`,
            });
        }

        const previousLeader = cluster.leader?.holder;
        const requestedAt = Date.now();
        const record = { leader: request.leader ?? previousLeader, member: choice.candidate, scheduled_at: request.scheduledAt?.iso };
        try {
          await context.dcs.setFailover(record);
        } catch (error) {
          req.log?.warn({ err: describeApiError(error) }, 'failover key write failed');
          return sendReply(res, { code: 503, text: 'failed to write failover key into DCS' });
        }
        req.log?.info({ action: request.action, ...record }, 'manual failover requested');
        context.wake(request.action);
        if (request.scheduledAt) return sendReply(res, { code: 202, text: 'Switchover scheduled' });

        const timeoutMs = options.outcomeTimeoutMs ?? outcomeTimeoutSeconds(effective.loop_wait) * 1000;
        const pending = { action: request.action, previousLeader, candidate: choice.candidate, requestedAt };
        const outcome = await waiter.waitFor((view) => failoverOutcome(pending, view), timeoutMs);
        sendReply(res, outcome ?? statusUnknown(request.action, Math.round(timeoutMs / 1000)));
      });

    router.post(HaNodePaths.switchover, requireAuth(credentials), manual('switchover'));
    router.post(HaNodePaths.failover, requireAuth(credentials), manual('failover'));
    router.delete(
      HaNodePaths.switchover,
      requireAuth(credentials),
      handle(async (req, res) => {
        const cluster = await context.dcs.getCluster().catch(() => undefined);
        if (!cluster) return sendReply(res, { code: 503, text: 'DCS is not accessible' });
        if (!cluster.failover?.scheduled_at) return sendReply(res, { code: 404, text: 'no switchover is scheduled' });
        try {
          await context.dcs.setFailover(undefined);
        } catch (error) {
          req.log?.warn({ err: describeApiError(error) }, 'failover key delete failed');
          return sendReply(res, { code: 409, text: 'failed to delete the scheduled switchover' });
        }
        context.wake('switchover-cancelled');
        sendReply(res, { code: 200, text: 'scheduled switchover deleted' });
      }),
    );
  };
}
