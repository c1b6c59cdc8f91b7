import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../lib/log.js';
import { buildStatefulSet } from '../../../operator/builders/statefulset.js';
import { HealthProbe } from '../../../sidecar/exporter/http/health.js';
import { resolveExporterOptions } from '../../../sidecar/exporter/options.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { sampleContext } from '../../operator/fixtures.js';

const quiet = createLogger({ name: 'connect-timeout-test', level: 'silent' });
/** How long the server takes to answer a new connection: what a loaded node can cost. */
const slowConnectMs = 400;

/**
 * The exporter as the operator configures it in a pod keeps a slow but healthy server up, where
 * pg_exporter's 100 ms connect timeout (a hand-started exporter's default) reads it as down.
 * Real PostgreSQL behind a TCP relay that holds each new connection for a while.
 */
describe('exporter connect timeout in the pods', { timeout: 120_000 }, () => {
  let server: TestPostgres;
  let relay: Server;
  let relayUrl: string;
  const sockets = new Set<Socket>();

  before(async () => {
    server = await startPostgres();
    relay = createServer((client) => {
      sockets.add(client);
      // Not read until the upstream is there: the startup message waits in the socket's buffer.
      setTimeout(() => {
        const upstream = connect(server.port, server.host);
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
      }, slowConnectMs);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as AddressInfo).port;
    relayUrl = `postgres://${encodeURIComponent(server.superuser)}:${encodeURIComponent(server.password)}@127.0.0.1:${port}/postgres?sslmode=disable`;
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => relay?.close(() => resolve()));
    await server?.stop();
  });

  function podEnv(): NodeJS.ProcessEnv {
    const exporter = buildStatefulSet(sampleContext()).spec!.template.spec!.containers.find((c) => c.name === 'exporter')!;
    const env: NodeJS.ProcessEnv = {};
    for (const variable of exporter.env ?? []) if (variable.value !== undefined) env[variable.name] = variable.value;
    return { ...env, PG_EXPORTER_URL: relayUrl };
  }

  async function probe(env: NodeJS.ProcessEnv): Promise<string> {
    const options = resolveExporterOptions({}, env);
    const health = new HealthProbe({ url: options.url, intervalMs: options.healthIntervalMs, timeoutMs: options.connectTimeoutMs, logger: quiet });
    try {
      return await health.probeOnce();
    } finally {
      await health.stop();
    }
  }

  it('an exporter configured as in the pods reads the slow server as up', async () => {
    assert.equal(await probe(podEnv()), 'primary');
  });

  it("a hand-started exporter keeps pg_exporter's 100 ms and reads it as down", async () => {
    assert.equal(resolveExporterOptions({}, { PG_EXPORTER_URL: relayUrl }).connectTimeoutMs, 100);
    assert.equal(await probe({ PG_EXPORTER_URL: relayUrl }), 'down');
  });
});
