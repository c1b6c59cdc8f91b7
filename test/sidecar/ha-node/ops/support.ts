import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../../lib/log.js';
import { serve, type RunningServer, type TlsFiles } from '../../../../lib/http.js';
import { createHaNodeApp } from '../../../../sidecar/ha-node/api/app.js';
import type { ApiContext } from '../../../../sidecar/ha-node/api/context.js';
import { createOpsModules, type OpsModuleOptions } from '../../../../sidecar/ha-node/api/ops/index.js';
import { LeaseDcs } from '../../../../sidecar/ha-node/dcs/lease-dcs.js';
import type { MemberRecord } from '../../../../sidecar/ha-node/dcs/types.js';
import { defaultConfig } from '../../../../sidecar/ha-node/ha/settings.js';
import type { NodeSnapshot } from '../../../../sidecar/ha-node/ha/snapshot.js';
import type { TestApiServer } from '../../../support/kube.js';

/**
 * An ha-node REST API with the ops modules served in-process over a real Lease DCS on the API
 * server stand-in, with fake peers: small HTTP servers answering GET /ha with a node document.
 */
export const quiet = createLogger({ name: 'ops-test', level: process.env.LOG_LEVEL ?? 'silent' });

export function dcsFor(api: TestApiServer, scope: string, name: string): LeaseDcs {
  return new LeaseDcs({ kubeConfig: api.kubeConfig, namespace: 'default', scope, name, ttl: () => 60, requestTimeoutMs: () => 3000, logger: quiet });
}

export interface FakePeer {
  name: string;
  url: string;
  doc: Record<string, unknown>;
  close(): Promise<void>;
}

export async function startFakePeer(name: string, doc: Record<string, unknown>): Promise<FakePeer> {
  const peer: Partial<FakePeer> & { doc: Record<string, unknown> } = { doc };
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(peer.doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(peer, {
    name,
    url: `http://127.0.0.1:${port}/ha`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as FakePeer;
}

export function replicaDoc(position: number, tags: Record<string, unknown> = {}): Record<string, unknown> {
  return { state: 'running', role: 'replica', timeline: 1, xlog: { received_location: position, replayed_location: position, paused: false }, tags };
}

export function memberRecord(name: string, apiUrl: string, extra: Partial<MemberRecord> = {}): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: apiUrl,
    host: '127.0.0.1',
    port: 5432,
    role: 'replica',
    state: 'running',
    tags: {},
    version: 'test',
    heartbeat: Date.now(),
    ...extra,
  };
}

export function snapshotFor(name: string, scope: string, dcs: LeaseDcs, overrides: Partial<NodeSnapshot> = {}): () => NodeSnapshot {
  return () => ({
    name,
    scope,
    version: 'test',
    tags: {},
    dbState: 'running',
    offlineRole: 'primary',
    isLeader: dcs.isLeader(),
    failsafeActive: false,
    paused: false,
    dcsLastSeen: dcs.lastSeen(),
    pendingRestart: false,
    lastLoopAt: performance.now(),
    config: { ...defaultConfig, loop_wait: 1, ttl: 60, retry_timeout: 3 },
    ...overrides,
  });
}

export async function serveOpsApp(
  dcs: LeaseDcs,
  snapshot: () => NodeSnapshot,
  options: OpsModuleOptions,
  tls?: TlsFiles,
): Promise<{ server: RunningServer; wakes: string[] }> {
  const wakes: string[] = [];
  const context: ApiContext = { snapshot, dcs, logger: quiet, wake: (reason) => wakes.push(reason) };
  const app = createHaNodeApp(context, createOpsModules(options));
  const server = await serve(app, { host: '127.0.0.1', port: 0, logger: quiet, shutdownTimeoutMs: 500, tls });
  return { server, wakes };
}

export interface HttpResult {
  status: number;
  text: string;
  headers: Headers;
  ms: number;
}

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const started = performance.now();
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: payload,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, ms: performance.now() - started };
}
