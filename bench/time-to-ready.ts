/**
 * Where users wait (not a test): the whole local stack (stand-in, node agent, operator) with real
 * PostgreSQL, as `keelson local up` runs it, and three waits measured on it:
 *  - apply → Ready: a 3-instance DatabaseCluster with default timings, from create to Healthy 3/3;
 *  - one added replica: from its container's start (pod status) to the pod's Ready condition;
 *  - a rolling restart (a parameter that needs one): from the patch to every member restarted and
 *    Healthy again, with a writer inserting through `-rw` every 100 ms counting failed inserts.
 * Run built, as the image runs (containers then start from dist/ too, not through tsx):
 *   npm run build && node dist/bench/time-to-ready.js
 * or from the sources, as `npm run local:up` runs (containers then start from the sources compiled
 * once into .keelson-cli/, see local/node/compiled-cli.ts):
 *   node --import tsx bench/time-to-ready.ts   (RUNS=3; KEEP_DIR=1 keeps each run's stack directory,
 * with every container's log, and prints its path, to see where the time went)
 * The rolling restart prints each member's phases (pending seen, PostgreSQL restarted, Ready
 * flips, role changes) and the operator's Events, seconds after the patch.
 * Run it on two checkouts to compare them; the figures are wall-clock, so compare runs made
 * under the same load.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { loadKubeConfig } from '../lib/kube/client.js';
import { createLogger } from '../lib/log.js';
import { startLocalStack } from '../local/cluster/stack.js';
import { group, plural, version } from '../api/crd/types.js';
import { OperatorKubeApi } from '../operator/kube-api.js';
import { describePhases, trackPhases } from './time-to-ready-phases.js';
import { describeRolling, trackRolling } from './rolling-phases.js';
import { median } from './stats.js';
import { clusterDriver, viaClusterIp, type ClusterDriver } from '../test/operator/e2e-support.js';

const runs = Number(process.env.RUNS ?? 3);
const ns = 'default';

function readyAt(pod: V1Pod): number | undefined {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  return ready?.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : undefined;
}

function containerStartedAt(pod: V1Pod): number | undefined {
  const started = pod.status?.containerStatuses?.find((c) => c.name === 'postgres')?.state?.running?.startedAt;
  return started ? new Date(started).getTime() : undefined;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Inserts through `service` every intervalMs until stopped; counts what committed and what failed. */
function writeThrough(demo: ClusterDriver, service: string, intervalMs: number) {
  let stopped = false;
  let committed = 0;
  let failed = 0;
  const loop = (async () => {
    for (let id = 1; !stopped; id += 1) {
      try {
        await demo.query(service, 'INSERT INTO bench_rolling (id) VALUES ($1)', [id]);
        committed += 1;
      } catch {
        failed += 1;
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    async stop(): Promise<{ committed: number; failed: number }> {
      stopped = true;
      await loop;
      return { committed, failed };
    },
  };
}

async function patchSpec(api: OperatorKubeApi, name: string, spec: Record<string, unknown>): Promise<void> {
  const current = await api.readCluster(ns, name);
  const body = { ...current, spec: { ...(current?.spec as Record<string, unknown>), ...spec } };
  await api.custom.replaceNamespacedCustomObject({ group, version, namespace: ns, plural, name, body });
}

/** The operator's Events since `since` (restarts, switchovers), seconds after it. */
async function operatorEvents(api: OperatorKubeApi, since: number): Promise<string[]> {
  const events = (await api.core.listNamespacedEvent({ namespace: ns })).items;
  return events
    .map((e) => ({ at: new Date(e.firstTimestamp ?? e.eventTime ?? 0).getTime(), e }))
    .filter(({ at }) => at >= since - 1000)
    .sort((a, b) => a.at - b.at)
    .map(({ at, e }) => `+${((at - since) / 1000).toFixed(1)} ${e.reason} ×${e.count ?? 1}: ${e.message ?? ''}`);
}

interface RunFigures {
  readyMs: number;
  replicaReadyMs: number;
  rollingMs: number;
  writes: number;
  failedWrites: number;
}

async function oneRun(index: number): Promise<RunFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-ready-bench-'));
  chmodSync(dir, 0o755);
  const logger = createLogger({ name: 'bench', level: 'silent' });
  const stack = await startLocalStack({ dir, logger, operatorVersion: '0.1.0', ipPrefix: `127.0.${60 + index}` });
  try {
    const api = new OperatorKubeApi(loadKubeConfig({ kubeconfig: stack.kubeconfigPath }));
    const name = 'demo';
    const demo: ClusterDriver = clusterDriver(api, ns, name, viaClusterIp);

    const podNamed = (pod: string) => async () => (await demo.pods()).find((p) => p.metadata?.name === pod);
    const firstPods = [0, 1, 2].map((ordinal) => trackPhases(podNamed(`${name}-${ordinal}`)));
    const applied = Date.now();
    await demo.create({ instances: 3 });
    await demo.healthyWith(3, 300_000);
    const healthy = Date.now();
    const readyMs = healthy - applied;
    for (const [ordinal, tracker] of firstPods.entries()) {
      process.stdout.write(`  ${name}-${ordinal}: ${describePhases(await tracker.stop(), { applied, healthy3: healthy })}\n`);
    }
    await demo.readPassword();

    const addedPhases = trackPhases(podNamed(`${name}-3`));
    const scaled = Date.now();
    await patchSpec(api, name, { instances: 4 });
    const added = await until(
      'demo-3 Ready',
      async () => {
        const pod = (await demo.pods()).find((p) => p.metadata?.name === `${name}-3`);
        const started = pod && containerStartedAt(pod);
        const ready = pod && readyAt(pod);
        return started !== undefined && ready !== undefined ? ready - started : undefined;
      },
      180_000,
    );
    await demo.healthyWith(4, 120_000);
    process.stdout.write(`  ${name}-3: ${describePhases(await addedPhases.stop(), { scaled, healthy4: Date.now() })}\n`);

    await demo.query(`${name}-rw`, 'CREATE TABLE IF NOT EXISTS bench_rolling (id int PRIMARY KEY)');
    const before = new Map((await demo.pods()).map((p) => [p.metadata!.name!, p.metadata!.uid!]));
    const writer = writeThrough(demo, `${name}-rw`, 100);
    const rolling = trackRolling(() => demo.pods());
    const rolled = Date.now();
    await patchSpec(api, name, { postgresql: { parameters: { max_connections: '120' }, pg_hba: [] } });
    await until(
      'every member restarted with the new max_connections',
      async () => {
        const rows = await demo.query(`${name}-rw`, "SELECT setting FROM pg_settings WHERE name = 'max_connections'");
        if (rows[0]?.setting !== '120') return undefined;
        const s = await demo.status();
        if (s.phase !== 'Healthy' || s.readyInstances !== 4) return undefined;
        const members = await Promise.all(
          (await demo.pods()).map(async (p) => {
            const host = p.status?.podIP;
            if (!host || before.get(p.metadata!.name!) === undefined) return false;
            const [row] = await demo.sql(host, "SELECT setting FROM pg_settings WHERE name = 'max_connections'");
            return row?.setting === '120';
          }),
        );
        return members.every(Boolean) ? true : undefined;
      },
      300_000,
    );
    const rollingMs = Date.now() - rolled;
    for (const line of describeRolling(await rolling.stop(), rolled)) process.stdout.write(`  rolling ${line}\n`);
    for (const line of await operatorEvents(api, rolled)) process.stdout.write(`  rolling event ${line}\n`);
    const writes = await writer.stop();
    return { readyMs, replicaReadyMs: added, rollingMs, writes: writes.committed, failedWrites: writes.failed };
  } finally {
    await stack.close();
    if (process.env.KEEP_DIR === '1') process.stdout.write(`run ${index + 1}: stack directory kept: ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

const results: RunFigures[] = [];
for (let i = 0; i < runs; i += 1) {
  const figures = await oneRun(i);
  results.push(figures);
  process.stdout.write(
    `run ${i + 1}: Ready ${seconds(figures.readyMs)} s, added replica ${seconds(figures.replicaReadyMs)} s, rolling restart ${seconds(figures.rollingMs)} s (${figures.writes} writes committed, ${figures.failedWrites} failed)\n`,
  );
}
process.stdout.write('\n| measure (median of ' + runs + ') | seconds |\n|---|---|\n');
process.stdout.write(`| 3 instances: apply → Healthy 3/3 | ${seconds(median(results.map((r) => r.readyMs)))} |\n`);
process.stdout.write(`| added replica: container start → Ready | ${seconds(median(results.map((r) => r.replicaReadyMs)))} |\n`);
process.stdout.write(`| rolling restart (max_connections), 4 members | ${seconds(median(results.map((r) => r.rollingMs)))} |\n`);
process.stdout.write(`| failed writes through -rw during the rolling restart (median) | ${median(results.map((r) => r.failedWrites))} |\n`);
