import type { Router } from 'express';
import { describeApiError } from '../../../../lib/kube/client.js';
import { HaNodePaths } from '../../../../lib/ports.js';
import type { ApiCredentials } from '../../../../api/ha-node/credentials.js';
import { isPlainObject, type JsonObject } from '../../ops/config-merge.js';
import type { ApiContext } from '../context.js';
import { configCasAttempts, writeConfigWithCas } from './config-cas.js';
import { serverParameterCheck } from './parameter-check.js';
import { readJsonBody } from '../json-body.js';
import { handle, requireAuth, sendReply } from './http.js';

/**
 * GET /config (from the DCS watch cache when it is current, else a fresh read), PATCH /config (validated merge, null removes) and PUT /config
 * (validated full replacement). Writes are compare-and-swap against the version the merge was
 * computed from (config-cas.ts), and nothing is written unless the whole result is valid.
 */
export function configRoutes(credentials: ApiCredentials | undefined) {
  return (router: Router, context: ApiContext): void => {
    router.get(
      HaNodePaths.config,
      handle(async (req, res) => {
        const cluster =
          context.dcs.cachedCluster() ??
          (await context.dcs.getCluster().catch((error: unknown) => {
            req.log?.warn({ err: describeApiError(error) }, 'config read failed');
            return undefined;
          }));
        if (!cluster) return sendReply(res, { code: 503, text: 'DCS is not accessible' });
        if (!cluster.config) return sendReply(res, { code: 502, text: 'no dynamic configuration stored' });
        res.status(200).json(cluster.config);
      }),
    );

    const serverCheck = serverParameterCheck(context.pg, context.logger);
    const write = (mode: 'patch' | 'put') =>
      handle(async (req, res) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        if (!isPlainObject(body.value) || Object.keys(body.value).length === 0) {
          return sendReply(res, { code: 400, text: 'Bad request: the body must be a non-empty JSON object' });
        }
        const outcome = await writeConfigWithCas(context.dcs, mode, body.value as JsonObject, configCasAttempts, serverCheck, {
          requireTls: context.requireTls === true,
        });
        if (!outcome.ok) {
          if (outcome.fields) req.log?.info({ fields: outcome.fields }, 'refused invalid configuration');
          else req.log?.warn({ err: outcome.error, attempts: outcome.attempts }, 'config write failed');
          return sendReply(res, outcome.reply);
        }
        if (outcome.changed) req.log?.info({ keys: Object.keys(body.value), mode, attempts: outcome.attempts }, 'dynamic configuration changed');
        context.wake('config-changed');
        res.status(200).json(outcome.config);
      });

    router.patch(HaNodePaths.config, requireAuth(credentials), write('patch'));
    router.put(HaNodePaths.config, requireAuth(credentials), write('put'));
  };
}
