import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Router } from 'express';
import { HaNodePaths } from '../../../../lib/ports.js';
import { roleOf } from '../../ha/snapshot.js';
import type { ApiCredentials } from '../../../../api/ha-node/credentials.js';
import type { ApiContext } from '../context.js';
import { readJsonBody } from '../json-body.js';
import { handle, requireAuth, sendReply } from './http.js';
import { leaderAddress } from '../../ha/loop-context.js';
import { primaryDirectories, type PrimarySource } from '../../backup/tls-server.js';
import { peerClientSsl } from '../../postgres/peer-tls.js';
import { archivePending as archivePendingOf } from '../../backup/metrics.js';
import type { BackupKeeper } from '../../backup/keeper.js';
import type { StanzaInfo } from '../../backup/info.js';

/**
 * How long GET /backup waits for `pgbackrest info`. Against an unreachable repository the listing
 * takes pgBackRest's retries (over a minute); the operator reads the archive queue from the same
 * answer with a 3 s timeout, and an unreachable repository is exactly when it must see the queue.
 */
const listingWaitMs = 2_000;

/** The repository listing, or after `waitMs` the last one read and why it is not newer (the listing goes on, shared). */
async function listingWithin(keeper: BackupKeeper, waitMs: number): Promise<{ info?: StanzaInfo; infoError?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
  try {
    const outcome = await Promise.race([
      keeper.sharedInfo().then(
        (info) => ({ info }),
        (error: Error) => ({ infoError: error.message }),
      ),
      late,
    ]);
    if (outcome !== 'late') return outcome;
  } finally {
    clearTimeout(timer);
  }
  const last = keeper.cachedInfo();
  const why = `pgbackrest info is still running after ${waitMs / 1000} s (the repository is slow or unreachable)`;
  return last ? { info: last, infoError: `${why}; the listing shown is the last one read` } : { infoError: why };
}

/** POST /backup {type, repository}: the body, checked field by field (400 names the field). */
export function parseBackupRequest(value: unknown): { ok: true; type: 'full' | 'diff' | 'incr'; repository: number } | { ok: false; text: string } {
  const body = value === undefined ? {} : value;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, text: 'Bad request: the body must be a JSON object' };
  const { type = 'full', repository = 1, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return { ok: false, text: `Bad request: unknown field "${unknown.slice(0, 64)}"` };
  if (type !== 'full' && type !== 'diff' && type !== 'incr') return { ok: false, text: 'Bad request: "type" must be full, diff or incr' };
  if (typeof repository !== 'number' || !Number.isInteger(repository) || repository < 1 || repository > 4)
    return { ok: false, text: 'Bad request: "repository" must be an integer from 1 to 4' };
  return { ok: true, type, repository };
}

/**
 * GET /backup: the keeper's status and the backups pgBackRest lists (open, like the other reads);
 * POST /backup: starts a backup on the primary, or on a streaming standby when the members run
 * pgBackRest's TLS server (202), one at a time (409 while one runs).
 */
export function backupRoutes(credentials: ApiCredentials | undefined) {
  return (router: Router, context: ApiContext): void => {
    const keeper = context.backup;
    router.get(
      HaNodePaths.backup,
      handle(async (_req, res) => {
        if (!keeper) return sendReply(res, { code: 404, text: 'backups are not configured' });
        const status = keeper.status();
        const listing = await listingWithin(keeper, listingWaitMs);
        // Read from the files, so also while the server is stopped: a primary stopped by a full WAL
        // volume still has its queue, and the queue is then what says why.
        const archivePending = existsSync(join(keeper.engine.dataDir, 'pg_wal', 'archive_status'))
          ? { archivePending: archivePendingOf(keeper.engine.dataDir) }
          : {};
        res.status(200).json({ ...status, ...archivePending, ...listing });
      }),
    );
    router.get(
      HaNodePaths.backupWindow,
      handle(async (_req, res) => {
        if (!keeper || !context.pg) return sendReply(res, { code: 404, text: 'backups are not configured' });
        const windows = await keeper.restoreWindow(join(context.pg.settings.binDir, 'pg_waldump')).then(
          (value) => ({ ok: true as const, value }),
          (error: Error) => ({ ok: false as const, error: error.message }),
        );
        if (!windows.ok) return sendReply(res, { code: 503, text: `cannot read the repositories: ${windows.error}` });
        res.status(200).json({ stanza: keeper.engine.stanza, repositories: windows.value });
      }),
    );
    router.post(
      HaNodePaths.backup,
      requireAuth(credentials),
      handle(async (req, res) => {
        const body = await readJsonBody(req, 4096);
        if (!body.ok) return sendReply(res, body.reply);
        if (!keeper) return sendReply(res, { code: 404, text: 'backups are not configured' });
        const parsed = parseBackupRequest(body.value);
        if (!parsed.ok) return sendReply(res, { code: 400, text: parsed.text });
        const snapshot = context.snapshot();
        const role = roleOf(snapshot);
        let primary: PrimarySource | undefined;
        if (role === 'replica') {
          // A standby takes the backup of its own files; the primary is reached over TLS.
          const leader = snapshot.cluster ? leaderAddress(snapshot.cluster) : undefined;
          if (!keeper.engine.config.tlsServer || !context.pg)
            return sendReply(res, { code: 503, text: 'backups on a standby need spec.backup.target prefer-standby; this member is not the primary' });
          if (!leader || snapshot.status?.replicationState !== 'streaming')
            return sendReply(res, { code: 503, text: 'this standby does not stream from a primary' });
          const superuser = context.pg.settings.superuser;
          const ssl = peerClientSsl(context.pg.settings.peerTls, leader);
          const dirs = await primaryDirectories(leader.host, leader.port, superuser, ssl).catch((error: Error) => error);
          if (dirs instanceof Error) return sendReply(res, { code: 503, text: `cannot reach the primary ${leader.name}: ${dirs.message}` });
          primary = { host: leader.host, port: leader.port, ...dirs };
        } else if (!snapshot.isLeader || role !== 'primary') {
          return sendReply(res, { code: 503, text: 'backups run on the primary or a streaming standby; this member is neither' });
        }
        const result = keeper.startBackup(parsed.type, parsed.repository, primary);
        if (!result.started) {
          return sendReply(
            res,
            result.reason === 'busy'
              ? { code: 409, text: 'a backup is already running' }
              : { code: 503, text: 'the stanza is not ready yet (see GET /backup)' },
          );
        }
        res.status(202).json({ started: true, type: parsed.type, repository: parsed.repository, startedAt: result.startedAt });
      }),
    );
  };
}
