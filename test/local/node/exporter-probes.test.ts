// The exporter sidecar as the operator builds it, run by the node agent's PodWorker against a
// real PostgreSQL that goes down: the database outage must neither restart the exporter nor make
// the pod NotReady (a NotReady pod leaves -rw even when its primary is healthy).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { createLogger } from '../../../lib/log.js';
import { ExporterPaths, Ports } from '../../../lib/ports.js';
import { AddressPool } from '../../../local/node/addresses.js';
import { builtinImageMappings } from '../../../local/node/images.js';
import { PodWorker } from '../../../local/node/pod-worker.js';
import { lookupUser } from '../../../local/node/run.js';
import { buildStatefulSet } from '../../../operator/builders/statefulset.js';
import { ContainerNames } from '../../../api/naming.js';
import { sampleContext } from '../../operator/fixtures.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { eventually, randomIpPrefix } from './helpers.js';

const logger = createLogger({ name: 'exporter-probes-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
let dir: string;
let postgres: TestPostgres;
let worker: PodWorker | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keelson-exporter-probes-'));
  // The exporter runs as the non-root account (runAsNonRoot): it must reach its pod folder.
  await chmod(dir, 0o755);
  // Not 127.0.0.1: the node agent rewrites that to the pod's own address (a pod's localhost).
  postgres = await startPostgres({ host: `${randomIpPrefix()}.250` });
});

after(async () => {
  await worker?.kill();
  await postgres?.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The built exporter container with its probe handlers as built, on a faster clock (period 1 s,
 * failure threshold as built), pointed at the test PostgreSQL.
 */
function exporterPod(postgresUrl: string): { pod: V1Pod; thresholdMs: number } {
  const template = buildStatefulSet(sampleContext()).spec!.template;
  const built = template.spec!.containers.find((c) => c.name === ContainerNames.exporter)!;
  const liveness = { ...built.livenessProbe!, periodSeconds: 1, timeoutSeconds: 1 };
  const container: V1Container = {
    ...built,
    env: built.env!.map((e) => (e.name === 'PG_EXPORTER_URL' ? { name: e.name, value: postgresUrl } : e)),
    livenessProbe: liveness,
    // The faster clock leaves liveness 3 s for a start that tsx compiles first: a startup probe on
    // the same handler holds liveness off until the process answers (the built period gives 30 s).
    startupProbe: { ...liveness, failureThreshold: 120 },
  };
  const mounted = new Set(container.volumeMounts?.map((m) => m.name));
  return {
    pod: {
      metadata: { name: 'demo-0', namespace: 'db', uid: 'uid-exporter-probes' },
      spec: {
        ...template.spec!,
        terminationGracePeriodSeconds: 2,
        containers: [container],
        volumes: template.spec!.volumes?.filter((v) => mounted.has(v.name)),
      },
    },
    thresholdMs: (liveness.failureThreshold ?? 3) * 1000,
  };
}

const ready = (s: V1PodStatus): boolean => s.phase === 'Running' && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const restarts = (s: V1PodStatus): number => s.containerStatuses?.[0]?.restartCount ?? 0;

async function status(url: string): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

test('a PostgreSQL outage longer than the liveness threshold neither restarts the exporter nor makes the pod NotReady', async () => {
  const { pod, thresholdMs } = exporterPod(`postgresql://${postgres.host}:${postgres.port}/postgres?sslmode=disable`);
  worker = new PodWorker(pod, {
    nodeDir: dir,
    nodeName: 'test-node',
    hostIP: '127.0.0.1',
    addresses: new AddressPool(randomIpPrefix()),
    images: builtinImageMappings(),
    sources: { secret: async () => ({ username: postgres.superuser, password: postgres.password }), configMap: async () => undefined },
    baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    nonRootUser: lookupUser('postgres'),
    backoff: { initialMs: 200, maxMs: 1000, resetAfterMs: 60_000 },
    markerPrefix: 'exporter-probes-test/',
    logger,
    ensureClaim: async () => undefined,
    kubeconfigFor: async () => undefined,
    onStatus: () => undefined,
    onEvent: () => undefined,
  });
  const running = worker;
  running.start();
  const exporterUrl = await eventually(() => (running.podIP ? `http://${running.podIP}:${Ports.exporter}` : undefined), 'pod address');
  await eventually(async () => (await status(`${exporterUrl}${ExporterPaths.liveness}`)) === 200, 'exporter sees PostgreSQL up', 120_000);
  await eventually(() => ready(running.status()), 'pod Ready');
  const restartsBefore = restarts(running.status());

  await postgres.stopServer();
  try {
    await eventually(async () => (await status(`${exporterUrl}${ExporterPaths.liveness}`)) === 503, 'exporter sees PostgreSQL down', 15_000);
    // Three times failureThreshold x period: a probe that follows PostgreSQL would have restarted it by now.
    const until = Date.now() + 3 * thresholdMs;
    let notReadySamples = 0;
    while (Date.now() < until) {
      if (!ready(running.status())) notReadySamples += 1;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(restarts(running.status()), restartsBefore, 'the exporter was restarted during the database outage');
    assert.equal(notReadySamples, 0, 'the pod was NotReady during the database outage');
    assert.equal(await status(`${exporterUrl}${ExporterPaths.liveness}`), 503, "the exporter's /liveness still reports PostgreSQL down");
  } finally {
    await postgres.start();
  }
  await eventually(async () => (await status(`${exporterUrl}${ExporterPaths.liveness}`)) === 200, 'the same exporter sees PostgreSQL again', 15_000);
  assert.equal(restarts(running.status()), restartsBefore);
});
