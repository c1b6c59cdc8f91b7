import type { Router } from 'express';
import { describeApiError } from '../../../../lib/kube/client.js';
import { HaNodePaths } from '../../../../lib/ports.js';
import type { DynamicConfig } from '../../dcs/types.js';
import type { ApiCredentials } from '../../ops/auth.js';
import { isPlainObject, mergePatch, sameDocument, withoutNulls, type JsonObject } from '../../ops/config-merge.js';
import { describeProblems, validateDynamicConfig } from '../../ops/config-validate.js';
import type { ApiContext } from '../context.js';
import { handle, readJsonBody, requireAuth, sendReply } from './http.js';

/**
 * GET /config (fresh DCS read), PATCH /config (validated merge, null removes) and PUT /config
 * (validated full replacement). Nothing is written unless the whole resulting document is valid.
 */
export function configRoutes(credentials: ApiCredentials | undefined) {
  return (router: Router, context: ApiContext): void => {
    router.get(HaNodePaths.config, handle(async (req, res) => {
      const cluster = await context.dcs.getCluster().catch((error: unknown) => {
        req.log?.warn({ err: describeApiError(error) }, 'config read failed');
        return undefined;
      });
      if (!cluster) return sendReply(res, { code: 503, text: 'DCS is not accessible' });
      if (!cluster.config) return sendReply(res, { code: 502, text: 'no dynamic configuration stored' });
      res.status(200).json(cluster.config);
    }));

    const write = (mode: 'patch' | 'put') =>
      handle(async (req, res) => {
        const body = await readJsonBody(req);
        if (!body.ok) return sendReply(res, body.reply);
        if (!isPlainObject(body.value) || Object.keys(body.value).length === 0) {
          return sendReply(res, { code: 400, text: 'Bad request: the body must be a non-empty JSON object' });
        }
        const cluster = await context.dcs.getCluster().catch(() => undefined);
        if (!cluster) return sendReply(res, { code: 503, text: 'DCS is not accessible' });
        const stored = (cluster.config ?? {}) as JsonObject;
        if (mode === 'patch' && !cluster.config) return sendReply(res, { code: 503, text: 'no dynamic configuration stored yet' });
        const next = mode === 'patch' ? mergePatch(stored, body.value) : withoutNulls(body.value);
        const problems = validateDynamicConfig(next, body.value);
        if (problems.length > 0) {
          req.log?.info({ fields: problems.map((p) => p.field) }, 'refused invalid configuration');
          return sendReply(res, { code: 400, text: describeProblems(problems) });
        }
        if (!sameDocument(stored, next)) {
          try {
            await context.dcs.setConfig(next as DynamicConfig);
          } catch (error) {
            req.log?.warn({ err: describeApiError(error) }, 'config write failed');
            return sendReply(res, { code: 503, text: 'failed to write the configuration into the DCS' });
          }
          req.log?.info({ keys: Object.keys(body.value), mode }, 'dynamic configuration changed');
        }
        context.wake('config-changed');
        res.status(200).json(next);
      });

    router.patch(HaNodePaths.config, requireAuth(credentials), write('patch'));
    router.put(HaNodePaths.config, requireAuth(credentials), write('put'));
  };
}
