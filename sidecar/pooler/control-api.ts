import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { parseGuardedJson } from '../../lib/json-guard.js';
import { PoolerPaths } from '../../lib/ports.js';
import { checkAuthorization, type ApiCredentials } from '../../api/ha-node/credentials.js';
import { renderPoolerMetrics } from './reach.js';

/**
 * The HTTP face of `keelson pooler`, for ha-node: pause (bounded), retarget (and resume), resume, state. Every
 * mutating call needs the cluster's API credentials; bodies are small, bounded and type-checked.
 */
export interface PoolerControl {
  state(): Promise<{ paused: boolean; target: { host: string; port: number } }>;
  pause(timeoutMs: number, holdMs: number): Promise<{ ok: true; waitedMs: number; pauseId: number } | { ok: false; reason: string }>;
  /** Ends the pause; with a pauseId only that pause (a late RESUME must not end a newer one). */
  resume(pauseId?: number): Promise<{ ok: true } | { ok: false; reason: string }>;
  /**
   * Points PgBouncer at host:port (ini rewrite and RELOAD). A call for where it already points
   * changes nothing: every RELOAD drops the server logins under way, which makes PgBouncer refuse
   * clients ("server login has been failing") until a login succeeds again.
   */
  retarget(host: string, port: number): Promise<void>;
  /** Whether the PostgreSQL server it points at accepts connections now. */
  reachable(): Promise<boolean>;
  /** Pauses since start, for the metrics. */
  pauses(): number;
}

const maxBodyBytes = 4096;

export const pauseBody = z.strictObject({
  timeoutMs: z.number().int().min(1).max(60_000),
  /** The pooler resumes on its own after this long, so a lost controller cannot leave it paused. */
  holdMs: z.number().int().min(1).max(600_000),
});

export const resumeBody = z.strictObject({
  pauseId: z.number().int().min(1).optional(),
});

export const targetBody = z.strictObject({
  host: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.:_-]+$/, 'host name or address'),
  port: z.number().int().min(1).max(65535),
  /** Then end this pause, in the same call: a switchover's repoint and RESUME cost one round trip. */
  resumePauseId: z.number().int().min(1).optional(),
});

type Reply = { code: number; body: unknown; text?: true };

function readBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes && !done) {
        done = true;
        resolve({ ok: false, reply: { code: 413, body: { error: `body larger than ${maxBodyBytes} bytes` } } });
      }
      if (!done) chunks.push(chunk);
    });
    req.on('error', () => !done && resolve({ ok: false, reply: { code: 400, body: { error: 'could not read the body' } } }));
    req.on('end', () => {
      if (done) return;
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (text === '') return resolve({ ok: true, value: {} });
      const parsed = parseGuardedJson(text);
      resolve(parsed.ok ? parsed : { ok: false, reply: { code: 400, body: { error: parsed.problem } } });
    });
  });
}

function problemOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
}

async function route(control: PoolerControl, credentials: ApiCredentials | undefined, req: IncomingMessage): Promise<Reply> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === PoolerPaths.healthz) return { code: 200, body: { ok: true } };
  // Open like ha-node's /metrics: Prometheus scrapes it without the API credentials.
  if (req.method === 'GET' && path === PoolerPaths.metrics) {
    const [{ paused }, reachable] = await Promise.all([control.state(), control.reachable()]);
    return { code: 200, body: renderPoolerMetrics({ paused, reachable, pauses: control.pauses() }), text: true };
  }
  const verdict = checkAuthorization(req.headers.authorization, credentials);
  if (verdict !== 'ok') return { code: 401, body: { error: 'authentication required' } };
  if (req.method === 'GET' && path === PoolerPaths.state) return { code: 200, body: { ...(await control.state()), reachable: await control.reachable() } };
  if (req.method !== 'POST') return { code: 404, body: { error: 'not found' } };
  const body = await readBody(req);
  if (!body.ok) return body.reply;
  if (path === PoolerPaths.pause) {
    const parsed = pauseBody.safeParse(body.value);
    if (!parsed.success) return { code: 400, body: { error: problemOf(parsed.error) } };
    const result = await control.pause(parsed.data.timeoutMs, parsed.data.holdMs);
    return result.ok ? { code: 200, body: result } : { code: 409, body: { error: result.reason } };
  }
  if (path === PoolerPaths.resume) {
    const parsed = resumeBody.safeParse(body.value);
    if (!parsed.success) return { code: 400, body: { error: problemOf(parsed.error) } };
    const result = await control.resume(parsed.data.pauseId);
    return result.ok ? { code: 200, body: result } : { code: 409, body: { error: result.reason } };
  }
  if (path === PoolerPaths.target) {
    const parsed = targetBody.safeParse(body.value);
    if (!parsed.success) return { code: 400, body: { error: problemOf(parsed.error) } };
    const startedAt = performance.now();
    await control.retarget(parsed.data.host, parsed.data.port);
    if (parsed.data.resumePauseId === undefined) return { code: 200, body: { ok: true } };
    const reloadedAt = performance.now();
    const result = await control.resume(parsed.data.resumePauseId);
    const timings = { reloadMs: Math.round(reloadedAt - startedAt), resumeMs: Math.round(performance.now() - reloadedAt) };
    return result.ok ? { code: 200, body: { ok: true, ...timings } } : { code: 409, body: { error: result.reason } };
  }
  return { code: 404, body: { error: 'not found' } };
}

export function createControlServer(control: PoolerControl, credentials: ApiCredentials | undefined): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    route(control, credentials, req)
      .catch((error: Error): Reply => ({ code: 500, body: { error: error.message } }))
      .then((reply) => {
        res.writeHead(reply.code, { 'content-type': reply.text ? 'text/plain; version=0.0.4; charset=utf-8' : 'application/json' });
        res.end(reply.text ? String(reply.body) : JSON.stringify(reply.body));
      })
      .catch(() => undefined);
  });
}
