/**
 * The Kubernetes API server stand-in: HTTPS (or HTTP) in-process server with the built-in kinds,
 * CRDs, watch, garbage collection and a kubeconfig written for kubectl and client-node.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../lib/log.js';
import { ApiCore, typeKeyOf } from './api.js';
import { builtinTypes } from './schema/builtins.js';
import { generateCertificates } from './security/certs.js';
import { crdType, registerStoredCrds, watchCrds } from './schema/crd.js';
import { Faults, type FaultControl } from './faults/faults.js';
import { startGarbageCollector } from './writes/gc.js';
import { createHandler } from './http/handler.js';
import { renderKubeconfig } from './security/kubeconfig.js';
import { OpenApiDocuments } from './http/openapi.js';
import { loadState, persistState } from './storage/persistence.js';
import { ResourceRegistry } from './schema/resources.js';
import { reviewTypes } from './security/reviews.js';
import { TokenRegistry } from './security/service-account-tokens.js';
import { ObjectStore } from './storage/store.js';
import { nowTime } from './writes/validation.js';

export interface ApiServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Where Service cluster IPs come from (default 127.1.0.0/16; must lie inside 127.0.0.0/8). */
  serviceCidr?: string;
  /** Default true: HTTPS with a generated CA. */
  https?: boolean;
  /** Where certificates and the kubeconfig go; a temp dir (deleted on close) if omitted. */
  dir?: string;
  /** Loads state from this file at start and saves every change to it. */
  stateFile?: string;
  /** Where to write the kubeconfig (default `<dir>/kubeconfig`). */
  kubeconfigPath?: string;
  /** Watch events kept for resume (default 1000); older resourceVersions get 410 Expired. */
  historyLimit?: number;
  /** BOOKMARK interval for watches that allow them (default 15 s). */
  bookmarkIntervalMs?: number;
  /** Serve the /_keelson/faults admin endpoint (tests and demos only; default false). */
  faultInjection?: boolean;
  /** Sees every request before it is served (benchmarks count requests and connections with it). */
  onRequest?: (request: IncomingMessage) => void;
  logger?: Logger;
}

export interface RunningApiServer {
  url: string;
  kubeconfigPath: string;
  /**
   * The bearer token in the kubeconfig (any token is accepted; this one names the admin, the only
   * client besides the admin certificate that may use the fault hook).
   */
  token: string;
  /** Fault injection, for tests. */
  faults: FaultControl;
  /** The CA certificate (PEM) when serving HTTPS. */
  caCert?: string;
  /**
   * Writes a kubeconfig for another client identity, for fault tests: a bearer token, or (HTTPS
   * only) a client certificate whose CN names the client.
   */
  writeKubeconfig(path: string, identity: { token: string } | { commonName: string }): void;
  close(): Promise<void>;
}

const bootstrapNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function bootstrap(core: ApiCore): void {
  const namespaces = core.registry.get('', 'v1', 'namespaces');
  if (!namespaces) return;
  for (const name of bootstrapNamespaces) {
    if (!core.find(namespaces, undefined, name)) core.create(namespaces, undefined, { metadata: { name } });
  }
  const services = core.registry.get('', 'v1', 'services');
  if (services && !core.find(services, 'default', 'kubernetes')) {
    core.create(services, 'default', {
      metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { ports: [{ name: 'https', port: 443, targetPort: 6443 }] },
    });
  }
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<RunningApiServer> {
  const host = options.host ?? '127.0.0.1';
  const useHttps = options.https ?? true;
  const ownsDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'keelson-apiserver-'));
  mkdirSync(dir, { recursive: true });
  const logger = options.logger ?? createLogger({ name: 'local-apiserver' });

  const registry = new ResourceRegistry();
  for (const type of builtinTypes) registry.add(type);
  for (const type of reviewTypes) registry.add(type);
  registry.add(crdType);
  const store = new ObjectStore(options.historyLimit ?? 1000);
  const core = new ApiCore(store, registry, options.serviceCidr);
  if (options.stateFile) {
    const snapshot = loadState(options.stateFile);
    // The revision jumps ahead so any resourceVersion a client kept from before (even one whose
    // write missed the debounced save) is older than the history: clients get 410 and relist.
    if (snapshot) store.restore({ ...snapshot, revision: snapshot.revision + 1000 });
  }
  registerStoredCrds(core);
  const stopCrds = watchCrds(core, logger);
  bootstrap(core);
  const persistence = options.stateFile
    ? persistState(store, options.stateFile, (err) => logger.error({ err, stateFile: options.stateFile }, 'cannot save state'))
    : undefined;
  const stopGc = startGarbageCollector(core, logger);
  const faults = new Faults(() => store.compact());
  const token = randomBytes(16).toString('hex');
  const adminCommonName = 'keelson-admin';

  const serve = createHandler({
    core,
    openapi: new OpenApiDocuments(registry),
    faults,
    logger,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 15_000,
    defaultWatchTimeoutSeconds: 1800,
    faultAdmin: options.faultInjection ?? false,
    admin: { token, commonName: adminCommonName },
    tokens: new TokenRegistry(),
  });
  const observe = options.onRequest;
  const handler: typeof serve = observe
    ? (request, response) => {
        observe(request);
        return serve(request, response);
      }
    : serve;

  const hosts = [...new Set([host, '127.0.0.1', 'localhost'])];
  const certs = useHttps ? generateCertificates(hosts, adminCommonName) : undefined;
  const server: Server = certs
    ? createHttpsServer({ cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert, requestCert: true, rejectUnauthorized: false }, handler)
    : createHttpServer(handler);
  server.keepAliveTimeout = 30_000;
  const sockets = new Set<Socket>();
  server.on(certs ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${useHttps ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = options.kubeconfigPath ?? join(dir, 'kubeconfig');
  const writeKubeconfig = (path: string, identity: { token: string } | { commonName: string }): void => {
    if ('commonName' in identity) {
      if (!certs) throw new Error('client certificates need HTTPS');
      const client = certs.issueClient(identity.commonName);
      writeFileSync(path, renderKubeconfig({ server: url, caCert: certs.caCert, clientCert: client.cert, clientKey: client.key }), { mode: 0o600 });
    } else {
      writeFileSync(path, renderKubeconfig({ server: url, caCert: certs?.caCert, token: identity.token }), { mode: 0o600 });
    }
  };
  writeKubeconfig(kubeconfigPath, { token });
  if (certs) {
    writeFileSync(join(dir, 'ca.crt'), certs.caCert);
    writeFileSync(join(dir, 'admin.crt'), certs.clientCert);
    writeFileSync(join(dir, 'admin.key'), certs.clientKey, { mode: 0o600 });
  }
  logger.info({ url, kubeconfig: kubeconfigPath, startedAt: nowTime() }, 'API server stand-in listening');

  let closed = false;
  return {
    url,
    kubeconfigPath,
    token,
    faults: faults.control(),
    caCert: certs?.caCert,
    writeKubeconfig,
    async close() {
      if (closed) return;
      closed = true;
      faults.control().resume();
      stopGc();
      stopCrds();
      persistence?.stop();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections?.();
      await done;
      if (ownsDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { typeKeyOf };
