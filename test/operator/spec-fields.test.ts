import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApiextensionsV1Api, AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import pg from 'pg';
import { parse as parseYaml } from 'yaml';
import { createLogger } from '../../lib/log.js';
import { HaNodePaths, Ports } from '../../lib/ports.js';
import type { LocalStack } from '../../local/cluster/stack.js';
import { databaseClusterSpecSchema } from '../../api/crd/types.js';
import { haNodeClientFor, haNodeGet } from '../support/ha-node-api.js';
import { OperatorKubeApi } from '../../operator/kube-api.js';
import { Annotations, ConfigKeys, poolerSelector, selectorString } from '../../api/naming.js';
import { startSettingsDigest, type HaNodeSettingsDocument } from '../../api/ha-node/settings-document.js';
import { clusterDriver, viaSelector, type ClusterDriver } from './e2e-support.js';
import { verifyFullTo } from './cluster-tls.js';
import { startE2eStack, type E2eStack } from './e2e-stack.js';
import { specFieldPaths } from './spec-paths.js';
import { eventually } from './support.js';

/**
 * Every field of DatabaseCluster.spec, changed on one running cluster (stand-in, local node, real
 * PostgreSQL), with the effect it must have, or the refusal at apply time for a value the
 * operator could not act on. The table's keys must equal the schema's leaf fields, and the field
 * table of docs/operator.md must list the same ones: a new field fails here until it has both.
 */
const ns = 'default';
const name = 'spec';
const run = promisify(execFile);
const logger = createLogger({ name: 'spec-fields', level: process.env.LOG_LEVEL ?? 'silent' });

interface Probe {
  driver: ClusterDriver;
  api: OperatorKubeApi;
  /** ha-node's dynamic configuration, read from the primary. */
  haConfig(): Promise<Record<string, unknown>>;
  /** One SHOW on every instance. */
  showEverywhere(parameter: string): Promise<string[]>;
  /** The running pods, once every one is ready, on the StatefulSet's newest revision, and one is primary. */
  settledPods(): Promise<V1Pod[] | undefined>;
  primaryIp(): Promise<string>;
  custom(plural: string, group: string, objectName: string): Promise<Record<string, unknown> | undefined>;
}

type Check = (probe: Probe) => Promise<boolean>;

/**
 * One change of a field: a merge patch of the spec and what must follow; or the API server's
 * refusal; or, for a check CEL cannot state, the operator's (Ready=False, InvalidSpec, then the
 * patch is undone with `revert`).
 */
type Step =
  | { patch?: Record<string, unknown>; effect: Check; timeoutMs?: number }
  | { patch: Record<string, unknown>; refused: RegExp }
  | { patch: Record<string, unknown>; invalid: RegExp; revert: Record<string, unknown> }
  /** Accepted by the API server, refused by ha-node against the server's pg_settings: a ConfigurationRefused Event names it. */
  | { patch: Record<string, unknown>; configRefused: RegExp };

interface FieldCase {
  field: string;
  /** A pod template field: its changes roll out together with the other ones (one rollout, not one per field). */
  podTemplate?: true;
  steps: Step[];
}

const everyPod =
  (check: (pod: V1Pod) => boolean): Check =>
  async (p) => {
    const pods = await p.settledPods();
    return !!pods && pods.every(check);
  };
const postgresOf = (pod: V1Pod) => pod.spec!.containers.find((c) => c.name === 'postgres')!;
const haKey =
  (key: string, value: unknown): Check =>
  async (p) =>
    JSON.stringify((await p.haConfig())[key]) === JSON.stringify(value);
const rollout = 120_000;
/**
 * The pgBackRest settings the operator hands ha-node (the settings document's backup), once every
 * settled pod started with them (its template carries the digest of the ConfigMap's start settings).
 */
const startedBackup =
  (check: (backup: Record<string, unknown>) => boolean): Check =>
  async (p) => {
    const configMap = await p.api.core.readNamespacedConfigMap({ namespace: ns, name: `${name}-config` });
    const document = parseYaml(configMap.data?.[ConfigKeys.haNode] ?? '{}') as HaNodeSettingsDocument;
    const digest = startSettingsDigest(document);
    const pods = await p.settledPods();
    return (
      !!pods &&
      pods.every((pod) => pod.metadata?.annotations?.[Annotations.haNodeStartSettingsHash] === digest) &&
      check((document.backup ?? {}) as Record<string, unknown>)
    );
  };
const backupStatus = async (p: Probe): Promise<Record<string, unknown> | undefined> => {
  const reply = await haNodeGet(p.api, ns, await p.primaryIp(), HaNodePaths.backup, 5_000);
  return reply.status === 200 ? (JSON.parse(reply.body) as Record<string, unknown>) : undefined;
};
const recoveryFixed = /bootstrap\.recovery is fixed at creation/;
const replicaStatus = async (p: Probe) => ((await p.driver.status()) as { replica?: { role?: string; source?: string } }).replica;
const applied = async (p: Probe) => (await p.driver.status()).conditions?.find((c) => c.type === 'Applied');
/** The CertificatesReady condition says `status`, its message matching `message` when given. */
const certificates =
  (status: 'True' | 'False', message?: RegExp): Check =>
  async (p) => {
    const condition = (await p.driver.status()).conditions?.find((c) => c.type === 'CertificatesReady');
    return condition?.status === status && (!message || message.test(condition.message));
  };
const replicaOf = (extra: Record<string, unknown>) => ({ replica: { source: { cluster: 'elsewhere' }, ...extra } });
const recoveryOf = (extra: Record<string, unknown>) => ({ bootstrap: { recovery: { source: { cluster: 'elsewhere' }, repository: 'local', ...extra } } });
const podImage = 'ghcr.io/keelson/keelson:0.1.1-spec';

/** The running, ready pooler pods (not being deleted). */
const poolerPods = async (p: Probe): Promise<V1Pod[]> =>
  (await p.api.listPods(ns, selectorString(poolerSelector(name)))).filter(
    (pod) => !pod.metadata?.deletionTimestamp && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );

/** A client of <name>-pooler-rw (or another pooler Service), as the application owner. */
async function poolerClient(p: Probe, serviceName = `${name}-pooler-rw`): Promise<pg.Client> {
  const service = await p.api.core.readNamespacedService({ namespace: ns, name: serviceName });
  const secret = await p.api.core.readNamespacedSecret({ namespace: ns, name: `${name}-app` });
  const client = new pg.Client({
    host: service.spec!.clusterIP!,
    port: Ports.pooler,
    user: 'shopper',
    password: Buffer.from(secret.data!.password!, 'base64').toString('utf8'),
    database: 'shop',
    ssl: await verifyFullTo(p.api, ns, name, service.spec!.clusterIP!),
    connectionTimeoutMillis: 3_000,
    query_timeout: 5_000,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The address of the server that answers through <name>-pooler-rw (or another pooler Service). */
async function viaPooler(p: Probe, serviceName?: string): Promise<string | undefined> {
  const client = await poolerClient(p, serviceName).catch(() => undefined);
  if (!client) return undefined;
  try {
    return (await client.query<{ address: string }>('SELECT host(inet_server_addr()) AS address')).rows[0]?.address;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether two clients, the first idle between its statements, are served by different server
 * sessions: so in session pooling; in transaction pooling the idle client's server serves the other.
 */
async function separateSessions(p: Probe): Promise<boolean> {
  const [first, second] = [await poolerClient(p), await poolerClient(p)];
  try {
    const pid = async (client: pg.Client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    const a = await pid(first);
    const b = await pid(second);
    return a !== undefined && b !== undefined && a !== b;
  } finally {
    await Promise.all([first, second].map((c) => c.end().catch(() => undefined)));
  }
}

/** JSON merge of two spec patches (objects merge key by key; anything else replaces). */
function mergePatch(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const prior = out[key];
    const bothObjects = [prior, value].every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
    out[key] = bothObjects ? mergePatch(prior as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

const collectorFiles = {
  'answer.yml': 'keelson_spec:\n  query: SELECT 42 AS answer\n  ttl: 0\n  metrics:\n    - answer: { usage: GAUGE, description: a fixed answer }\n',
  'other.yml': 'keelson_other:\n  query: SELECT 7 AS value\n  ttl: 0\n  metrics:\n    - value: { usage: GAUGE, description: another collector }\n',
};
const metricsOf = async (p: Probe): Promise<string[]> => {
  const pods = await p.settledPods();
  if (!pods) return [];
  return Promise.all(
    pods.map(async (pod) => (await fetch(`http://${pod.status!.podIP!}:${Ports.exporter}/metrics`, { signal: AbortSignal.timeout(5_000) })).text()),
  );
};

/** In order: dynamic settings (two instances), day-2 and fixed fields, then pod template fields on one instance. */
const table: FieldCase[] = [
  {
    field: 'ha.ttl',
    steps: [
      { patch: { ha: { ttl: 12 } }, effect: haKey('ttl', 12) },
      { patch: { ha: { ttl: 1 } }, refused: /spec\.ha\.ttl/ },
    ],
  },
  {
    field: 'ha.loopWait',
    steps: [
      { patch: { ha: { loopWait: 3 } }, effect: haKey('loop_wait', 3) },
      { patch: { ha: { loopWait: 5 } }, refused: /loopWait \+ 2\*retryTimeout must be <= ttl/ },
    ],
  },
  { field: 'ha.retryTimeout', steps: [{ patch: { ha: { retryTimeout: 3 } }, effect: haKey('retry_timeout', 3) }] },
  { field: 'ha.maximumLagOnFailover', steps: [{ patch: { ha: { maximumLagOnFailover: 2097152 } }, effect: haKey('maximum_lag_on_failover', 2097152) }] },
  {
    field: 'ha.synchronousMode',
    steps: [
      {
        patch: { ha: { synchronousMode: 'strict' } },
        effect: async (p) =>
          (await haKey('synchronous_mode_strict', true)(p)) &&
          (await p.driver.sql(await p.primaryIp(), 'SHOW synchronous_standby_names'))[0]?.synchronous_standby_names !== '',
      },
      {
        patch: { ha: { synchronousMode: 'off' } },
        effect: async (p) =>
          (await haKey('synchronous_mode', 'off')(p)) &&
          (await p.driver.sql(await p.primaryIp(), 'SHOW synchronous_standby_names'))[0]?.synchronous_standby_names === '',
      },
    ],
  },
  {
    field: 'ha.synchronousNodeCount',
    steps: [{ patch: { ha: { synchronousMode: 'on', synchronousNodeCount: 2 } }, refused: /synchronousNodeCount must be less than instances/ }],
  },
  { field: 'ha.failsafeMode', steps: [{ patch: { ha: { failsafeMode: true } }, effect: haKey('failsafe_mode', true) }] },
  {
    field: 'ha.primaryHangTimeout',
    steps: [
      { patch: { ha: { primaryHangTimeout: 45 } }, effect: haKey('primary_hang_timeout', 45) },
      { patch: { ha: { primaryHangTimeout: 3 } }, refused: /primaryHangTimeout must be 0 or 5 to 3600/ },
    ],
  },
  {
    field: 'postgresql.parameters',
    steps: [
      // work_mem was set at creation: a dropped parameter goes back to PostgreSQL's default on every instance.
      {
        patch: { postgresql: { parameters: { work_mem: null, log_min_duration_statement: '250' } } },
        effect: async (p) =>
          (await p.showEverywhere('work_mem')).every((v) => v === '4MB') && (await p.showEverywhere('log_min_duration_statement')).every((v) => v === '250ms'),
        timeoutMs: 30_000,
      },
      { patch: { postgresql: { parameters: { port: '6000' } } }, refused: /port, listen_addresses.* are managed by ha-node/ },
      { patch: { postgresql: { parameters: { application_name: 'a\nb' } } }, refused: /spec\.postgresql\.parameters\.application_name: Invalid value/ },
      { patch: { postgresql: { parameters: { work_mem: 'lots' } } }, configRefused: /"db\.parameters\.work_mem" is not an integer or a size with a unit/ },
      // The refusal blocks nothing: the next valid value is applied everywhere.
      {
        patch: { postgresql: { parameters: { work_mem: '8MB' } } },
        effect: async (p) => (await p.showEverywhere('work_mem')).every((v) => v === '8MB'),
        timeoutMs: 30_000,
      },
    ],
  },
  {
    field: 'postgresql.pg_hba',
    steps: [
      {
        patch: { postgresql: { pg_hba: ['host all all 127.0.0.0/8 scram-sha-256', 'host all all 0.0.0.0/0 reject'] } },
        effect: async (p) =>
          (await p.driver.sql(await p.primaryIp(), "SELECT 1 FROM pg_hba_file_rules WHERE type = 'host' AND address = '0.0.0.0' AND auth_method = 'reject'"))
            .length === 1,
      },
      {
        patch: { postgresql: { pg_hba: ['host all all 0.0.0.0/0 magic'] } },
        invalid: /spec\.postgresql\.pg_hba: line 1 "host all all 0\.0\.0\.0\/0 magic" has an unknown authentication method/,
        revert: { postgresql: { pg_hba: ['host all all 127.0.0.0/8 scram-sha-256', 'host all all 0.0.0.0/0 reject'] } },
      },
    ],
  },
  {
    field: 'switchover.targetInstance',
    steps: [
      {
        patch: { switchover: { targetInstance: `${name}-1` } },
        effect: async (p) => (await p.driver.status()).switchover?.result === 'Succeeded' && (await p.driver.status()).currentPrimary === `${name}-1`,
        timeoutMs: 60_000,
      },
      { patch: { switchover: { targetInstance: 'other-1' } }, refused: /must name an instance of this cluster/ },
    ],
  },
  {
    field: 'storage.size',
    steps: [
      {
        patch: { storage: { size: '2Gi' } },
        effect: async (p) => {
          const claims = (await p.api.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items.filter(
            (c) => c.metadata!.name!.endsWith(`-${name}-0`) || c.metadata!.name!.endsWith(`-${name}-1`),
          );
          return claims.length === 2 && claims.every((c) => c.spec?.resources?.requests?.storage === '2Gi');
        },
      },
      // Volumes never shrink: the API server refuses a smaller size.
      { patch: { storage: { size: '1Gi' } }, refused: /storage\.size cannot shrink: volumes only grow/ },
      // A replication slot keeps at most a quarter of the size (2Gi now) in WAL (the spec sets none here).
      { effect: async (p) => (await p.showEverywhere('max_slot_wal_keep_size')).every((v) => v === '512MB') },
    ],
  },
  {
    field: 'storage.autoGrow.max',
    steps: [
      { patch: { storage: { autoGrow: { max: '1Gi' } } }, refused: /storage\.autoGrow\.max must not be below storage\.size/ },
      // Far below the threshold: nothing grows, and the condition says why.
      {
        patch: { storage: { autoGrow: { max: '4Gi' } } },
        effect: async (p) => (await p.driver.status()).conditions?.some((c) => c.type === 'VolumeAutoGrow' && c.reason === 'BelowThreshold') === true,
      },
    ],
  },
  {
    field: 'storage.autoGrow.threshold',
    steps: [
      { patch: { storage: { autoGrow: { threshold: 100 } } }, refused: /spec\.storage\.autoGrow\.threshold/ },
      // 1 %: the data directory alone is more, so the claims grow by the step.
      {
        patch: { storage: { autoGrow: { threshold: 1, step: '1Gi' } } },
        effect: async (p) => (await p.driver.events()).some((e) => e.reason === 'VolumeAutoGrow' && /-spec-0 2Gi → 3072Mi/.test(e.message ?? '')),
        timeoutMs: 60_000,
      },
      {
        patch: { storage: { autoGrow: { threshold: 80 } } },
        effect: async (p) => (await p.driver.status()).members?.every((m) => m.volumes?.[0]?.volume === 'data') === true,
      },
    ],
  },
  // walStorage is fixed at creation (this cluster has none); its effects: test/operator/full-disk-e2e.test.ts.
  ...['walStorage.size', 'walStorage.storageClass', 'walStorage.autoGrow.threshold', 'walStorage.autoGrow.step', 'walStorage.autoGrow.max'].map((field) => ({
    field,
    steps: [
      {
        patch: { walStorage: { size: '1Gi', storageClass: 'standard', autoGrow: { threshold: 80, step: '20%', max: '2Gi' } } },
        refused: /walStorage can only be set when the cluster is created/,
      },
    ],
  })),
  {
    field: 'storage.autoGrow.step',
    steps: [{ patch: { storage: { autoGrow: { step: '0%' } } }, refused: /spec\.storage\.autoGrow\.step/ }],
  },
  { field: 'storage.storageClass', steps: [{ patch: { storage: { storageClass: 'fast' } }, refused: /storage\.storageClass cannot change after creation/ }] },
  {
    field: 'postgresVersion',
    steps: [
      { effect: async (p) => (await p.showEverywhere('server_version_num')).every((v) => v.startsWith('15')) },
      { patch: { postgresVersion: 16 }, refused: /postgresVersion cannot change after creation/ },
    ],
  },
  {
    field: 'bootstrap.database',
    steps: [
      {
        effect: async (p) =>
          (await p.driver.sql(await p.primaryIp(), "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'shop'"))[0]?.owner === 'shopper',
      },
      { patch: { bootstrap: { database: 'other' } }, refused: /bootstrap\.database and bootstrap\.owner cannot change after creation/ },
    ],
  },
  {
    field: 'bootstrap.owner',
    steps: [
      {
        effect: async (p) =>
          (await p.driver.sql(await p.primaryIp(), "SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'shopper'"))[0]?.rolcanlogin === true,
      },
      { patch: { bootstrap: { owner: 'someone' } }, refused: /bootstrap\.database and bootstrap\.owner cannot change after creation/ },
    ],
  },
  {
    field: 'instances',
    steps: [
      {
        patch: { instances: 1 },
        effect: async (p) => (await p.settledPods())?.length === 1 && (await p.driver.status()).readyInstances === 1,
        timeoutMs: 60_000,
      },
      { patch: { instances: 0 }, refused: /spec\.instances/ },
    ],
  },
  {
    field: 'monitoring.serviceMonitor.enabled',
    steps: [
      {
        patch: { monitoring: { serviceMonitor: { enabled: true } } },
        effect: async (p) => (await p.custom('servicemonitors', 'monitoring.coreos.com', name)) !== undefined,
      },
    ],
  },
  {
    field: 'monitoring.serviceMonitor.labels',
    steps: [
      {
        patch: { monitoring: { serviceMonitor: { labels: { release: 'prom' } } } },
        effect: async (p) =>
          ((await p.custom('servicemonitors', 'monitoring.coreos.com', name))?.metadata as { labels?: Record<string, string> })?.labels?.release === 'prom',
      },
    ],
  },
  {
    field: 'monitoring.serviceMonitor.interval',
    steps: [
      {
        patch: { monitoring: { serviceMonitor: { interval: '15s' } } },
        effect: async (p) =>
          ((await p.custom('servicemonitors', 'monitoring.coreos.com', name))?.spec as { endpoints?: Array<{ interval?: string }> })?.endpoints?.every(
            (e) => e.interval === '15s',
          ) === true,
      },
      { patch: { monitoring: { serviceMonitor: { interval: 'often' } } }, refused: /interval/ },
    ],
  },
  {
    field: 'exporter.collectors.configMapName',
    podTemplate: true,
    steps: [
      {
        patch: { exporter: { collectors: { configMapName: 'spec-collectors' } } },
        effect: async (p) => (await metricsOf(p)).some((text) => /^keelson_spec_answer 42$/m.test(text)),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'exporter.collectors.key',
    podTemplate: true,
    steps: [
      {
        patch: { exporter: { collectors: { key: 'answer.yml' } } },
        effect: async (p) => (await metricsOf(p)).some((text) => /^keelson_spec_answer 42$/m.test(text) && !/^keelson_other_value/m.test(text)),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'backup.repositories',
    podTemplate: true,
    steps: [
      {
        patch: { backup: { repositories: [{ name: 'local', volume: { size: '1Gi', accessMode: 'ReadWriteOnce' } }] } },
        effect: async (p) => (await backupStatus(p))?.stanzaReady === true,
        timeoutMs: rollout,
      },
      { patch: { backup: { repositories: [{ name: 'Bad_Name', volume: { size: '1Gi' } }] } }, refused: /repositories/ },
    ],
  },
  {
    field: 'backup.archiveTimeout',
    podTemplate: true,
    steps: [
      {
        patch: { backup: { archiveTimeout: 90 } },
        effect: async (p) => (await p.showEverywhere('archive_timeout')).every((v) => v === '90s'),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'backup.processMax',
    podTemplate: true,
    steps: [
      { patch: { backup: { processMax: 3 } }, effect: startedBackup((backup) => backup.processMax === 3), timeoutMs: rollout },
      { patch: { backup: { processMax: 0 } }, refused: /processMax/ },
    ],
  },
  {
    field: 'backup.target',
    podTemplate: true,
    steps: [
      {
        patch: { backup: { target: 'prefer-standby' } },
        effect: async (p) =>
          (await startedBackup((backup) => backup.tlsServer !== undefined)(p)) &&
          (await everyPod((pod) => pod.spec?.volumes?.some((v) => v.secret?.secretName?.endsWith('-backup-tls')) === true)(p)),
        timeoutMs: rollout,
      },
      { patch: { backup: { target: 'standby' } }, refused: /target/ },
    ],
  },
  {
    field: 'backup.retention.fullCount',
    podTemplate: true,
    steps: [
      {
        patch: { backup: { retention: { fullCount: 3 } } },
        effect: startedBackup((backup) => (backup.retention as { fullCount?: number } | undefined)?.fullCount === 3),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'image',
    podTemplate: true,
    steps: [{ patch: { image: podImage }, effect: everyPod((pod) => postgresOf(pod).image === podImage), timeoutMs: rollout }],
  },
  {
    field: 'resources.requests',
    podTemplate: true,
    steps: [
      {
        patch: { resources: { requests: { cpu: '100m' } } },
        effect: everyPod((pod) => postgresOf(pod).resources?.requests?.cpu === '100m'),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'resources.limits',
    podTemplate: true,
    steps: [
      {
        patch: { resources: { limits: { memory: '1Gi' } } },
        effect: everyPod((pod) => postgresOf(pod).resources?.limits?.memory === '1Gi'),
        timeoutMs: rollout,
      },
      { patch: { resources: { limits: { memory: '-1' } } }, refused: /limits/ },
    ],
  },
  {
    field: 'scheduling.podAntiAffinity',
    podTemplate: true,
    steps: [
      { patch: { scheduling: { podAntiAffinity: 'none' } }, effect: everyPod((pod) => pod.spec?.affinity?.podAntiAffinity === undefined), timeoutMs: rollout },
    ],
  },
  {
    field: 'scheduling.affinity',
    podTemplate: true,
    steps: [
      {
        patch: {
          scheduling: {
            affinity: {
              nodeAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  { weight: 1, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
                ],
              },
            },
          },
        },
        effect: everyPod(
          (pod) => pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.preference.matchExpressions?.[0]?.key === 'disk',
        ),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'scheduling.tolerations',
    podTemplate: true,
    steps: [
      {
        patch: { scheduling: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] } },
        effect: everyPod((pod) => pod.spec?.tolerations?.some((t) => t.key === 'dedicated' && t.value === 'db') === true),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'scheduling.nodeSelector',
    podTemplate: true,
    steps: [
      {
        patch: { scheduling: { nodeSelector: { 'kubernetes.io/os': 'linux' } } },
        effect: everyPod((pod) => pod.spec?.nodeSelector?.['kubernetes.io/os'] === 'linux'),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'scheduling.topologySpreadConstraints',
    podTemplate: true,
    steps: [
      {
        patch: {
          scheduling: {
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'ScheduleAnyway',
                labelSelector: { matchLabels: { 'keelson.io/cluster': name } },
              },
            ],
          },
        },
        effect: everyPod((pod) => pod.spec?.topologySpreadConstraints?.[0]?.topologyKey === 'kubernetes.io/hostname'),
        timeoutMs: rollout,
      },
    ],
  },
  {
    field: 'exporter.enabled',
    steps: [
      {
        patch: { exporter: { enabled: false } },
        effect: async (p) => {
          const pods = await p.settledPods();
          const headless = await p.api.core.readNamespacedService({ namespace: ns, name: `${name}-headless` });
          const monitor = (await p.custom('servicemonitors', 'monitoring.coreos.com', name))?.spec as { endpoints?: Array<{ port?: string }> } | undefined;
          return (
            !!pods &&
            pods.every((pod) => pod.spec!.containers.every((c) => c.name !== 'exporter')) &&
            !headless.spec?.ports?.some((port) => port.name === 'exporter') &&
            monitor?.endpoints?.map((e) => e.port).join() === 'ha'
          );
        },
        timeoutMs: rollout,
      },
    ],
  },
  { field: 'backup.retention.windowDays', steps: [{ patch: { backup: { retention: { windowDays: 7 } } }, refused: /set fullCount or windowDays, not both/ }] },
  {
    field: 'backup.schedules.immediate',
    steps: [
      // The repository has no backup of this cluster yet: the operator creates <name>-initial and starts it.
      {
        patch: { backup: { schedules: { immediate: true } } },
        effect: async (p) =>
          (await p.driver.events()).some(
            (e) => e.reason === 'BackupScheduled' && /^created Backup .*-initial \(first backup once archiving works\)$/.test(e.message ?? ''),
          ),
        timeoutMs: 150_000,
      },
      { patch: { backup: { schedules: { immediate: 'yes' } } }, refused: /schedules\.immediate/ },
    ],
  },
  {
    field: 'backup.schedules.full',
    steps: [
      // Every minute: the next minute creates a Backup object, which the operator starts on the primary.
      {
        patch: { backup: { schedules: { full: '* * * * *' } } },
        effect: async (p) => {
          const events = await p.driver.events();
          return (
            events.some((e) => e.reason === 'BackupScheduled' && /\(schedule full: \* \* \* \* \*\)$/.test(e.message ?? '')) &&
            events.some((e) => e.reason === 'BackupStarted' && /: full backup started on /.test(e.message ?? ''))
          );
        },
        timeoutMs: 150_000,
      },
      { patch: { backup: { schedules: { full: 'often' } } }, refused: /schedules\.full/ },
    ],
  },
  { field: 'backup.schedules.differential', steps: [{ patch: { backup: { schedules: { differential: '61 * * * *' } } }, refused: /schedules\.differential/ }] },
  { field: 'backup.schedules.incremental', steps: [{ patch: { backup: { schedules: { incremental: 'hourly' } } }, refused: /schedules\.incremental/ }] },
  { field: 'bootstrap.recovery.source.cluster', steps: [{ patch: recoveryOf({}), refused: recoveryFixed }] },
  // A standby cluster is tested end to end in test/operator/standby-e2e.test.ts; a running one cannot become one.
  // A running primary cluster takes replica: enabled false keeps it primary (status says so); enabled true
  // would demote it, which a missing source refuses before anything stops (the swap: standby-swap-e2e).
  {
    field: 'replica.enabled',
    steps: [
      { patch: replicaOf({ enabled: false }), effect: async (p) => (await replicaStatus(p))?.role === 'primary' && (await applied(p))?.status === 'True' },
      {
        patch: replicaOf({ enabled: true }),
        effect: async (p) =>
          /DatabaseCluster default\/elsewhere does not exist/.test((await applied(p))?.message ?? '') && (await p.settledPods())?.length !== undefined,
        timeoutMs: 60_000,
      },
      { patch: replicaOf({ enabled: false }), effect: async (p) => (await applied(p))?.status === 'True', timeoutMs: 90_000 },
    ],
  },
  {
    field: 'replica.source.cluster',
    steps: [
      { patch: replicaOf({ enabled: false, source: { cluster: 'yonder' } }), effect: async (p) => (await replicaStatus(p))?.source === 'default/yonder' },
    ],
  },
  {
    field: 'replica.source.namespace',
    steps: [
      {
        patch: replicaOf({ enabled: false, source: { cluster: 'elsewhere', namespace: 'other' } }),
        effect: async (p) => (await replicaStatus(p))?.source === 'other/elsewhere',
      },
    ],
  },
  {
    field: 'replica.source.host',
    steps: [
      {
        patch: replicaOf({ enabled: false, source: { cluster: null, namespace: null, host: '127.0.0.99', credentialsSecret: 'source-replication' } }),
        effect: async (p) => (await replicaStatus(p))?.source === '127.0.0.99:5432',
      },
    ],
  },
  {
    field: 'replica.source.port',
    steps: [
      {
        patch: replicaOf({
          enabled: false,
          source: { cluster: null, namespace: null, host: '127.0.0.99', port: 6432, credentialsSecret: 'source-replication' },
        }),
        effect: async (p) => (await replicaStatus(p))?.source === '127.0.0.99:6432',
      },
    ],
  },
  {
    field: 'replica.source.credentialsSecret',
    steps: [
      {
        patch: { replica: { enabled: false, source: { host: '127.0.0.99', credentialsSecret: null } } },
        refused: /replica\.source\.host needs credentialsSecret/,
      },
    ],
  },
  // A standby from a repository is tested end to end in test/operator/backup/standby-repository-e2e.test.ts.
  {
    field: 'replica.source.repository',
    steps: [{ patch: { replica: { source: { repository: 'nowhere' } } }, refused: /replica\.source\.repository must name one of backup\.repositories/ }],
  },
  { field: 'replica.source.stanza', steps: [{ patch: { replica: { source: { stanza: 'src' } } }, refused: /replica\.source\.stanza goes with repository/ }] },
  {
    field: 'replica.minApplyDelay',
    steps: [{ patch: { replica: { minApplyDelay: 'soon' } }, refused: /spec\.replica\.minApplyDelay.*(must be a duration|should match)/ }],
  },
  {
    field: 'replica.promotion',
    steps: [
      {
        patch: {
          replica: {
            promotion: 'AfterSourceDemotion',
            source: { cluster: null, namespace: null, host: '127.0.0.99', credentialsSecret: 'source-replication' },
          },
        },
        refused: /promotion AfterSourceDemotion needs a DatabaseCluster source/,
      },
    ],
  },
  {
    field: 'bootstrap.recovery.source.namespace',
    steps: [{ patch: recoveryOf({ source: { cluster: 'elsewhere', namespace: 'other' } }), refused: recoveryFixed }],
  },
  { field: 'bootstrap.recovery.repository', steps: [{ patch: recoveryOf({ repository: 'local' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.targetTime', steps: [{ patch: recoveryOf({ targetTime: '2026-01-01T00:00:00Z' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.backup', steps: [{ patch: recoveryOf({ backup: '20260101-000000F' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.targetLSN', steps: [{ patch: recoveryOf({ targetLSN: '0/3000060' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.targetName', steps: [{ patch: recoveryOf({ targetName: 'before-upgrade' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.targetXID', steps: [{ patch: recoveryOf({ targetXID: '1234' }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.targetImmediate', steps: [{ patch: recoveryOf({ targetImmediate: true }), refused: recoveryFixed }] },
  { field: 'bootstrap.recovery.exclusive', steps: [{ patch: recoveryOf({ exclusive: true }), refused: recoveryFixed }] },
  // The cluster's own Secrets stand in for a user's: <name>-ca holds a CA with its key, -server-tls and
  // -replication-tls certificates it signed (the bad Secrets one by one: test/operator/certificates/).
  {
    field: 'certificates.serverCASecret',
    steps: [
      {
        patch: { certificates: { serverCASecret: 'no-such-ca' } },
        effect: certificates('False', /^spec\.certificates\.serverCASecret: Secret "no-such-ca" not found$/),
      },
      { patch: { certificates: { serverCASecret: `${name}-ca` } }, effect: certificates('True') },
    ],
  },
  {
    field: 'certificates.serverTLSSecret',
    steps: [
      { patch: { certificates: { serverCASecret: null, serverTLSSecret: `${name}-server-tls` } }, refused: /serverTLSSecret needs serverCASecret/ },
      {
        patch: { certificates: { serverTLSSecret: `${name}-replication-tls` } },
        effect: certificates('False', /serverTLSSecret: Secret "spec-replication-tls": tls\.crt is not a TLS server certificate/),
      },
      { patch: { certificates: { serverTLSSecret: `${name}-server-tls` } }, effect: certificates('True') },
      { patch: { certificates: { serverTLSSecret: null, serverCASecret: null } }, effect: certificates('True') },
    ],
  },
  {
    field: 'certificates.clientCASecret',
    steps: [
      {
        patch: { certificates: { clientCASecret: 'no-such-ca' } },
        effect: certificates('False', /^spec\.certificates\.clientCASecret: Secret "no-such-ca" not found$/),
      },
      { patch: { certificates: { clientCASecret: `${name}-ca` } }, effect: certificates('True') },
    ],
  },
  {
    field: 'certificates.replicationTLSSecret',
    steps: [
      {
        patch: { certificates: { clientCASecret: null, replicationTLSSecret: `${name}-replication-tls` } },
        refused: /replicationTLSSecret needs clientCASecret/,
      },
      {
        patch: { certificates: { replicationTLSSecret: `${name}-server-tls` } },
        effect: certificates('False', /replicationTLSSecret: Secret "spec-server-tls": tls\.crt is not a TLS client certificate/),
      },
      { patch: { certificates: { replicationTLSSecret: null, clientCASecret: null } }, effect: certificates('True') },
    ],
  },
  // Enabled on the running cluster: the database pods roll once (they learn where the poolers
  // are), and an application connects through <name>-pooler-rw to the primary. The pooler's own
  // tests (test/sidecar/pooler) cover the switchover behaviour with real PgBouncer.
  {
    field: 'pooler.enabled',
    steps: [
      { patch: { pooler: { enabled: true, instances: 0 } }, refused: /pooler\.instances must be at least 1/ },
      {
        patch: { pooler: { enabled: true } },
        effect: async (p) => (await viaPooler(p)) === (await p.primaryIp()) && (await p.settledPods()) !== undefined,
        timeoutMs: rollout,
      },
      // The status says so: both pooler pods ready, none paused, both reaching PostgreSQL.
      {
        effect: async (p) =>
          JSON.stringify((await p.driver.status()).pooler) === JSON.stringify({ instances: 2, readyInstances: 2, paused: 0, reachingPostgres: 2 }),
        timeoutMs: 30_000,
      },
    ],
  },
  // With one instance left there is no replica: the read-only pooler falls back to the primary
  // (test/sidecar/pooler/read-only.test.ts covers replicas and switchovers with real PgBouncer).
  {
    field: 'pooler.readOnly.enabled',
    steps: [
      { patch: { pooler: { enabled: false, readOnly: { enabled: true } } }, refused: /pooler\.readOnly\.enabled requires pooler\.enabled/ },
      {
        patch: { pooler: { readOnly: { enabled: true } } },
        effect: async (p) => (await viaPooler(p, `${name}-pooler-ro`)) === (await p.primaryIp()),
        timeoutMs: rollout,
      },
      // The status counts its pods; none is on a replica, there being none.
      {
        effect: async (p) => JSON.stringify((await p.driver.status()).pooler?.readOnly) === JSON.stringify({ instances: 2, readyInstances: 2, onReplicas: 0 }),
        timeoutMs: 30_000,
      },
    ],
  },
  {
    field: 'pooler.instances',
    steps: [
      {
        patch: { pooler: { instances: 1 } },
        effect: async (p) => (await poolerPods(p)).length === 1 && (await viaPooler(p)) === (await p.primaryIp()),
        timeoutMs: 60_000,
      },
      { patch: { pooler: { instances: 33 } }, refused: /pooler\.instances/ },
    ],
  },
  {
    field: 'pooler.mode',
    steps: [
      // Transaction pooling (the default) shares the idle client's server session; session pooling does not.
      { effect: async (p) => !(await separateSessions(p)) },
      { patch: { pooler: { mode: 'session' } }, effect: async (p) => (await poolerPods(p)).length === 1 && (await separateSessions(p)), timeoutMs: 60_000 },
      { patch: { pooler: { mode: 'statement' } }, refused: /pooler\.mode/ },
    ],
  },
  { field: 'pooler.maxClientConnections', steps: [{ patch: { pooler: { maxClientConnections: 0 } }, refused: /pooler\.maxClientConnections/ }] },
  { field: 'pooler.defaultPoolSize', steps: [{ patch: { pooler: { defaultPoolSize: 0 } }, refused: /pooler\.defaultPoolSize/ }] },
  { field: 'pooler.parameters', steps: [{ patch: { pooler: { parameters: { listen_port: '7000' } } }, refused: /pooler\.parameters/ }] },
  { field: 'pooler.resources.requests', steps: [{ patch: { pooler: { resources: { requests: { cpu: 'lots' } } } }, refused: /pooler\.resources\.requests/ }] },
  { field: 'pooler.resources.limits', steps: [{ patch: { pooler: { resources: { limits: { memory: '-1Gi' } } } }, refused: /pooler\.resources\.limits/ }] },
  {
    field: 'roles',
    steps: [
      {
        patch: { roles: [{ name: 'reporting', login: true, connectionLimit: 3 }] },
        effect: async (p) => {
          const rows = await p.driver.sql(await p.primaryIp(), "SELECT rolconnlimit, rolcanlogin FROM pg_authid WHERE rolname = 'reporting'");
          const reconciled = (await p.driver.status()).conditions?.find((c) => c.type === 'RolesReconciled')?.status === 'True';
          return reconciled && rows[0]?.rolconnlimit === 3 && rows[0]?.rolcanlogin === true;
        },
        timeoutMs: 60_000,
      },
      { patch: { roles: [{ name: 'pg_reporting' }] }, refused: /spec\.roles\[0\]\.name: Invalid value: "string": reserved role name/ },
      { patch: { roles: [{ name: 'shopper' }] }, refused: /the bootstrap owner is kept by ha-node/ },
    ],
  },
];

describe('every DatabaseCluster.spec field has a test entry and a row in docs/operator.md', () => {
  const fields = specFieldPaths(databaseClusterSpecSchema);

  it('the table changes every field of the schema, and only those', () => {
    assert.deepEqual(table.map((c) => c.field).sort(), [...fields].sort());
  });

  it('the field table of docs/operator.md lists every field', () => {
    const doc = readFileSync(new URL('../../docs/operator.md', import.meta.url), 'utf8');
    const documented = new Set([...doc.matchAll(/^\| `spec\.([A-Za-z_.]+)` \|/gm)].map((m) => m[1]!));
    assert.deepEqual(
      fields.filter((f) => !documented.has(f)),
      [],
      'every field has its row',
    );
  });
});

describe('every DatabaseCluster.spec field takes effect on a running cluster (stand-in, real PostgreSQL)', { timeout: 600_000 }, () => {
  let dir: string;
  let e2e: E2eStack;
  let stack: LocalStack;
  let api: OperatorKubeApi;
  let driver: ClusterDriver;
  let probe: Probe;

  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', stack.kubeconfigPath, '--cache-dir', join(dir, 'kcache'), '-n', ns, ...args], { timeout: 30_000 });
  const patchSpec = (spec: Record<string, unknown>) => kubectl('patch', `dbc/${name}`, '--type=merge', '-p', JSON.stringify({ spec }));

  before(async () => {
    e2e = await startE2eStack('spec', { logger, ipPrefix: '127.0.52' });
    ({ dir, stack, api } = e2e);
    driver = clusterDriver(api, ns, name, viaSelector);
    const apps = api.kubeConfig.makeApiClient(AppsV1Api);
    probe = {
      driver,
      api,
      primaryIp: async () => {
        const primary = (await driver.status()).currentPrimary;
        const ip = (await driver.pods()).find((pod) => pod.metadata?.name === primary)?.status?.podIP;
        if (!ip) throw new Error('no primary address yet');
        return ip;
      },
      haConfig: async () => (await haNodeClientFor(api, ns, name)).getConfig(await probe.primaryIp()),
      showEverywhere: async (parameter) => {
        const pods = await driver.pods();
        return Promise.all(pods.map(async (pod) => String((await driver.sql(pod.status!.podIP!, `SHOW ${parameter}`))[0]?.[parameter])));
      },
      settledPods: async () => {
        const revision = (await apps.readNamespacedStatefulSet({ namespace: ns, name })).status?.updateRevision;
        const pods = await driver.pods();
        const s = await driver.status();
        const ready = (pod: V1Pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
        const settled = pods.every((pod) => ready(pod) && !pod.metadata?.deletionTimestamp && pod.metadata?.labels?.['controller-revision-hash'] === revision);
        return settled && s.phase === 'Healthy' && pods.length === s.readyInstances ? pods : undefined;
      },
      custom: async (plural, group, objectName) =>
        (await api.custom.getNamespacedCustomObject({ group, version: 'v1', namespace: ns, plural, name: objectName }).catch(() => undefined)) as
          Record<string, unknown> | undefined,
    };
    // The Prometheus Operator's API, so spec.monitoring has an object to write (ServiceMonitor).
    await api.kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({
      body: {
        metadata: { name: 'servicemonitors.monitoring.coreos.com' },
        spec: {
          group: 'monitoring.coreos.com',
          scope: 'Namespaced',
          names: { kind: 'ServiceMonitor', plural: 'servicemonitors', singular: 'servicemonitor', listKind: 'ServiceMonitorList' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }],
        },
      },
    });
    await api.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'spec-collectors' }, data: collectorFiles } });
  });

  after(async () => {
    await e2e?.close();
  });

  it('a new cluster starts with the spec it was created with: the DCS is seeded from it, no restart needed', async () => {
    await driver.create({
      instances: 2,
      ha: { ttl: 10, loopWait: 2, retryTimeout: 4 },
      postgresql: { parameters: { work_mem: '8MB', max_connections: '90' } },
      bootstrap: { database: 'shop', owner: 'shopper' },
    });
    await driver.healthyWith(2, 120_000);
    await driver.readPassword();
    const config = await eventually('ha-node /config', () => probe.haConfig(), 30_000);
    assert.equal(config.ttl, 10);
    // max_slot_wal_keep_size: the operator's bound from storage.size (1Gi), as the spec sets none.
    assert.deepEqual((config.db as { parameters?: unknown }).parameters, { max_slot_wal_keep_size: '256MB', work_mem: '8MB', max_connections: '90' });
    assert.deepEqual(await probe.showEverywhere('max_connections'), ['90', '90']);
    assert.ok(!(await driver.events()).some((e) => e.reason === 'Restarted'), 'no instance restarted for a parameter it was created with');
  });

  for (const entry of table) {
    if (entry === table.find((e) => e.podTemplate)) {
      it('the pod template fields roll out together', async () => {
        const patches = table.filter((e) => e.podTemplate).flatMap((e) => e.steps.flatMap((step) => ('effect' in step && step.patch ? [step.patch] : [])));
        await patchSpec(patches.reduce((all, patch) => mergePatch(all, patch), {}));
        await eventually(
          'one rollout of every pod template change',
          async () => (await probe.settledPods())?.every((pod) => postgresOf(pod).image === podImage),
          rollout,
        );
      });
    }
    it(`spec.${entry.field}`, async () => {
      for (const step of entry.steps) {
        if ('refused' in step) {
          const refusal = await patchSpec(step.patch).then(
            () => undefined,
            (error: { stderr?: string }) => error.stderr ?? String(error),
          );
          assert.ok(refusal, `the API server accepted ${JSON.stringify(step.patch)}`);
          assert.match(refusal, step.refused);
          continue;
        }
        if ('configRefused' in step) {
          await patchSpec(step.patch);
          await eventually(
            'a ConfigurationRefused Event',
            async () => (await driver.events()).some((e) => e.reason === 'ConfigurationRefused' && step.configRefused.test(e.message ?? '')),
            30_000,
          );
          continue;
        }
        if ('invalid' in step) {
          await patchSpec(step.patch);
          const ready = await eventually(
            'Ready=False, InvalidSpec',
            async () => (await driver.status()).conditions?.find((c) => c.type === 'Ready' && c.reason === 'InvalidSpec'),
            20_000,
          );
          assert.match(ready.message, step.invalid);
          assert.ok(
            (await driver.events()).some((e) => e.reason === 'InvalidSpec' && step.invalid.test(e.message ?? '')),
            'an InvalidSpec Warning Event',
          );
          await patchSpec(step.revert);
          await eventually('Healthy again', async () => (await driver.status()).phase === 'Healthy', 30_000);
          continue;
        }
        if (step.patch) await patchSpec(step.patch);
        await eventually(`spec.${entry.field} ${JSON.stringify(step.patch ?? 'as created')} in effect`, () => step.effect(probe), step.timeoutMs ?? 20_000);
      }
    });
  }

  it('no PATCH /config was refused along the way', async () => {
    const expected = table.flatMap((c) => c.steps.flatMap((step) => ('configRefused' in step ? [step.configRefused] : [])));
    const unexpected = (await driver.events()).filter((e) => e.reason === 'ConfigurationRefused' && !expected.some((re) => re.test(e.message ?? '')));
    assert.deepEqual(unexpected, []);
  });
});
