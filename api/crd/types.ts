import { z } from 'zod';
import type { V1Affinity, V1Toleration, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import { hbaProblems, maxHbaLineLength, sslOff, sslOn } from '../postgres/pg-hba.js';
import { managedParameters, managedParametersRule, parameterNameProblem, parameterValuePattern } from '../postgres/pg-parameters.js';
import { allowedPgbouncerParameters } from '../pooler/pgbouncer-parameters.js';
import { haCountBounds, haTimingBounds } from './ha-bounds.js';
import { backupSchema, recoverySchema } from './backup-types.js';
import { certificatesSchema } from './certificates-types.js';
import { replicaSchema, replicaStatusSchema } from './replica-types.js';
import { bootstrapOwnerRule, managedRolesSchema } from './managed-roles.js';
import { managedRolesStatusSchema } from './managed-status.js';
import { dnsLabel, duration, embeddedList, embeddedObject, quantity, storageQuantity } from './schema-helpers.js';
import {
  autoGrowSchema,
  maxBelowSize,
  maxNotBelowSize,
  sizeNeverShrinks,
  storageClassFixed,
  volumeUsageSchema,
  walStorageFixed,
  walStorageSchema,
} from './storage-types.js';

/**
 * The DatabaseCluster API (keelson.io/v1). These zod schemas are the single source: the TypeScript
 * types below are inferred from them and crds/ is generated from them (npm run crds). Defaults and
 * validation live here; rules spanning fields are CEL (x-kubernetes-validations) so the API server
 * enforces them, and `validateSpec` repeats them for servers without CEL.
 */

export const group = 'keelson.io';
export const version = 'v1';
export const kind = 'DatabaseCluster';
export const plural = 'databaseclusters';
export const singular = 'databasecluster';
export const shortNames = ['dbc'];
export const apiVersion = `${group}/${version}`;

const storageSchema = z
  .object({
    size: storageQuantity.default('1Gi').meta({ description: 'Size of each instance data volume.' }),
    storageClass: z.string().optional().meta({ description: 'StorageClass of the data volumes; the cluster default when unset. Fixed at creation.' }),
    autoGrow: autoGrowSchema.optional(),
  })
  .refine((storage) => !maxBelowSize(storage), { message: maxNotBelowSize('storage').message, path: ['autoGrow', 'max'] })
  .meta({
    description: 'Persistent storage of each instance.',
    // Volume claim templates cannot change: a new class would be silently ignored, so it is refused.
    'x-kubernetes-validations': [storageClassFixed('storage'), maxNotBelowSize('storage'), sizeNeverShrinks('storage')],
  });

const resourcesSchema = z
  .object({
    requests: z.record(z.string(), quantity).optional(),
    limits: z.record(z.string(), quantity).optional(),
  })
  .meta({ description: 'Compute resources of the postgres container.' });

/** More than PostgreSQL has: bounds the spec and the CEL rule's cost. */
const maxParameters = 500;

const postgresqlSchema = z
  .object({
    parameters: z
      // The pattern reaches the CRD, so every API server refuses a newline before ha-node sees it.
      .record(z.string(), z.string().regex(new RegExp(parameterValuePattern), 'must not contain control characters such as a newline'))
      .refine((value) => Object.keys(value).length <= maxParameters, `at most ${maxParameters} parameters`)
      .default({})
      .meta({
        description:
          'postgresql.conf parameters, applied through ha-node /config. Those ha-node sets itself (port, listen_addresses, hot_standby, primary_conninfo, …) are refused.',
        maxProperties: maxParameters,
        'x-kubernetes-validations': [
          { rule: managedParametersRule, message: `postgresql.parameters: ${managedParameters.join(', ')} are managed by ha-node and cannot be set here` },
        ],
      }),
    pg_hba: z.array(z.string().max(maxHbaLineLength)).max(500).default([]).meta({
      description:
        'Client authentication rules (pg_hba.conf lines), applied through ha-node /config with a reload. They follow the rules ha-node needs (superuser, replication) and its hostnossl rejects (every remote client must use TLS, so a host line only matches TLS sessions), and replace the defaults (password over TLS for every network client) when given. hostnossl or hostgssenc lines that admit a client, and trust for a remote address, are refused.',
    }),
  })
  .superRefine((value, ctx) => {
    for (const name of Object.keys(value.parameters)) {
      const problem = parameterNameProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', path: ['parameters', name], message: problem });
    }
    // The operator always serves TLS (ha-node then requires it of every remote client) unless ssl is turned off here.
    const context = { ssl: sslOn(value.parameters), requireTls: !sslOff(value.parameters) };
    for (const problem of hbaProblems(value.pg_hba, context)) ctx.addIssue({ code: 'custom', path: ['pg_hba'], message: problem });
  })
  .meta({ description: 'PostgreSQL configuration.' });

const haSchema = z
  .object({
    ttl: z.number().int().min(haTimingBounds.ttl.min).max(haTimingBounds.ttl.max).default(30).meta({ description: 'Leader lease duration in seconds.' }),
    loopWait: z
      .number()
      .int()
      .min(haTimingBounds.loop_wait.min)
      .max(haTimingBounds.loop_wait.max)
      .default(10)
      .meta({ description: 'Seconds between HA loop runs.' }),
    retryTimeout: z
      .number()
      .int()
      .min(haTimingBounds.retry_timeout.min)
      .max(haTimingBounds.retry_timeout.max)
      .default(10)
      .meta({ description: 'Seconds to retry DCS and PostgreSQL operations.' }),
    maximumLagOnFailover: z
      .number()
      .int()
      .min(0)
      .max(haCountBounds.maximum_lag_on_failover.max)
      .default(1048576)
      .meta({ description: 'Bytes a replica may lag and still be promoted.' }),
    synchronousMode: z.enum(['off', 'on', 'strict', 'quorum']).default('off'),
    synchronousNodeCount: z.number().int().min(1).max(haCountBounds.synchronous_node_count.max).default(1),
    failsafeMode: z.boolean().default(false).meta({ description: 'Keep the primary when the API server is unreachable but all members confirm it.' }),
    primaryHangTimeout: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .refine((v) => v === 0 || v >= 5, 'must be 0 (never) or 5 to 3600')
      .default(30)
      .meta({
        description:
          'Seconds a primary that stopped answering keeps the lease before it is killed and a replica takes over (0 = never, else 5 to 3600); shortened so the lease is released within ttl, never below 5.',
      }),
  })
  .meta({
    description: 'High-availability timings and replication mode (Patroni semantics).',
    'x-kubernetes-validations': [
      { rule: 'self.loopWait + 2 * self.retryTimeout <= self.ttl', message: 'ha: loopWait + 2*retryTimeout must be <= ttl' },
      {
        rule: '!has(self.primaryHangTimeout) || self.primaryHangTimeout == 0 || self.primaryHangTimeout >= 5',
        message: 'ha: primaryHangTimeout must be 0 or 5 to 3600',
      },
    ],
  });

const exporterSchema = z
  .object({
    enabled: z.boolean().default(true),
    collectors: z
      .object({
        configMapName: dnsLabel.meta({ description: 'ConfigMap holding collector YAML files.' }),
        key: z.string().optional().meta({ description: 'One key of the ConfigMap; all keys when unset.' }),
      })
      .optional()
      .meta({ description: 'Collector definitions replacing the built-in set.' }),
  })
  .meta({ description: 'The metrics exporter sidecar.' });

const monitoringSchema = z
  .object({
    serviceMonitor: z
      .object({
        enabled: z.boolean().default(false),
        labels: z.record(z.string(), z.string()).default({}),
        interval: duration.default('30s'),
      })
      .default({ enabled: false, labels: {}, interval: '30s' }),
  })
  .meta({ description: 'Prometheus Operator integration (created only when its CRD exists).' });

const switchoverSchema = z
  .object({
    targetInstance: dnsLabel.optional().meta({ description: 'Pod name of the instance that should be primary.' }),
  })
  .meta({ description: 'Declarative switchover: set targetInstance; the result is reported in status.switchover.' });

const bootstrapSchema = z
  .object({
    database: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .default('app'),
    owner: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .default('app'),
    recovery: recoverySchema.optional(),
  })
  .meta({
    description:
      'The application database and its owner role, fixed at creation. The primary creates them when missing (at bootstrap, after a failover, on a restored cluster) and keeps the role password equal to the <name>-app Secret.',
    'x-kubernetes-validations': [
      { rule: "!(self.owner in ['postgres', 'replicator', 'keelson_pooler'])", message: 'bootstrap.owner must not be postgres, replicator or keelson_pooler' },
      // ha-node reads the names when its pod starts; a rename would leave the old role and database behind.
      {
        rule: 'self.database == oldSelf.database && self.owner == oldSelf.owner',
        message: 'bootstrap.database and bootstrap.owner cannot change after creation',
      },
      // Recovery only chooses how a new cluster starts: set later it would be silently ignored.
      {
        rule: 'has(self.recovery) == has(oldSelf.recovery) && (!has(self.recovery) || self.recovery == oldSelf.recovery)',
        message: 'bootstrap.recovery is fixed at creation (it only chooses how a new cluster starts)',
      },
    ],
  });

const schedulingSchema = z
  .object({
    podAntiAffinity: z.enum(['preferred', 'required', 'none']).default('preferred').meta({
      description: 'Spread instances over nodes (kubernetes.io/hostname); merged into affinity unless it sets podAntiAffinity.',
    }),
    affinity: embeddedObject<V1Affinity>('Pod affinity (core/v1 Affinity).').optional(),
    tolerations: embeddedList<V1Toleration>('Pod tolerations (core/v1 Toleration).').optional(),
    nodeSelector: z.record(z.string(), z.string()).optional(),
    topologySpreadConstraints: embeddedList<V1TopologySpreadConstraint>('core/v1 TopologySpreadConstraint list.').optional(),
  })
  .meta({ description: 'Where instances run.' });

const poolerSchema = z
  .object({
    enabled: z.boolean().default(false),
    instances: z
      .number()
      .int()
      .min(0)
      .max(32)
      .default(2)
      .meta({ description: 'PgBouncer pods (a PodDisruptionBudget keeps one up when there are two or more).' }),
    mode: z.enum(['transaction', 'session']).default('transaction').meta({ description: 'PgBouncer pool_mode.' }),
    maxClientConnections: z.number().int().min(1).max(100_000).default(1000).meta({ description: 'PgBouncer max_client_conn per pod.' }),
    defaultPoolSize: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(20)
      .meta({ description: 'PgBouncer default_pool_size: server connections per user and database, per pod.' }),
    parameters: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((value, ctx) => {
        for (const name of Object.keys(value)) {
          if (!allowedPgbouncerParameters.includes(name))
            ctx.addIssue({ code: 'custom', path: [name], message: `unknown or operator-managed PgBouncer setting "${name}"` });
        }
      })
      .meta({
        description: `Extra PgBouncer settings; allowed: ${allowedPgbouncerParameters.join(', ')}.`,
        maxProperties: 64,
        'x-kubernetes-validations': [
          {
            rule: `self.all(k, k in [${allowedPgbouncerParameters.map((p) => `'${p}'`).join(', ')}])`,
            message: 'pooler.parameters: unknown or operator-managed PgBouncer setting',
          },
        ],
      }),
    resources: resourcesSchema.default({}),
    readOnly: z
      .object({ enabled: z.boolean().default(false) })
      .default({ enabled: false })
      .meta({
        description:
          'A second PgBouncer Deployment (Service <name>-pooler-ro, same instances and settings) in front of the replicas: the primary points each at a streaming replica within maximumLagOnFailover, spread across them, or at itself when none streams. Never paused.',
      }),
  })
  .meta({
    description:
      'A PgBouncer pooler in front of the primary (Service <name>-pooler-rw). ha-node pauses it around a planned switchover and points it at the new primary, so clients wait instead of failing.',
    'x-kubernetes-validations': [
      { rule: '!self.enabled || self.instances >= 1', message: 'pooler.instances must be at least 1 when the pooler is enabled' },
      { rule: '!self.readOnly.enabled || self.enabled', message: 'pooler.readOnly.enabled requires pooler.enabled' },
    ],
  });

export const databaseClusterSpecSchema = z
  .object({
    instances: z.number().int().min(1).max(64).default(3).meta({ description: 'Number of PostgreSQL instances (one primary, the rest replicas).' }),
    image: z.string().min(1).optional().meta({ description: 'Container image; the operator image when unset.' }),
    postgresVersion: z.number().int().min(13).max(18).default(15).meta({
      description:
        "PostgreSQL major version: ha-node runs the image's /usr/lib/postgresql/<version>/bin. Fixed at creation (a major upgrade needs pg_upgrade).",
    }),
    storage: storageSchema.default({ size: '1Gi' }),
    walStorage: walStorageSchema.optional(),
    resources: resourcesSchema.default({}),
    postgresql: postgresqlSchema.default({ parameters: {}, pg_hba: [] }),
    ha: haSchema.default({
      ttl: 30,
      loopWait: 10,
      retryTimeout: 10,
      maximumLagOnFailover: 1048576,
      synchronousMode: 'off',
      synchronousNodeCount: 1,
      failsafeMode: false,
      primaryHangTimeout: 30,
    }),
    exporter: exporterSchema.default({ enabled: true }),
    monitoring: monitoringSchema.default({ serviceMonitor: { enabled: false, labels: {}, interval: '30s' } }),
    switchover: switchoverSchema.default({}),
    bootstrap: bootstrapSchema.default({ database: 'app', owner: 'app' }),
    scheduling: schedulingSchema.default({ podAntiAffinity: 'preferred' }),
    backup: backupSchema.optional(),
    replica: replicaSchema.optional(),
    certificates: certificatesSchema.default({}),
    pooler: poolerSchema
      .default({
        enabled: false,
        instances: 2,
        mode: 'transaction',
        maxClientConnections: 1000,
        defaultPoolSize: 20,
        parameters: {},
        resources: {},
        readOnly: { enabled: false },
      })
      .refine((value) => !value.enabled || value.instances >= 1, {
        message: 'pooler.instances must be at least 1 when the pooler is enabled',
        path: ['instances'],
      })
      .refine((value) => !value.readOnly.enabled || value.enabled, {
        message: 'pooler.readOnly.enabled requires pooler.enabled',
        path: ['readOnly', 'enabled'],
      }),
    roles: managedRolesSchema,
  })
  .meta({
    description: 'Desired state of a highly available PostgreSQL cluster.',
    'x-kubernetes-validations': [
      {
        rule: "self.ha.synchronousMode == 'off' || self.ha.synchronousNodeCount < self.instances",
        message: 'ha.synchronousNodeCount must be less than instances when synchronousMode is not off',
      },
      walStorageFixed,
      { rule: 'self.postgresVersion == oldSelf.postgresVersion', message: 'postgresVersion cannot change after creation (a major upgrade needs pg_upgrade)' },
      {
        rule: '!has(self.bootstrap.recovery) || (has(self.backup) && self.backup.repositories.exists(r, r.name == self.bootstrap.recovery.repository))',
        message: 'bootstrap.recovery.repository must name one of backup.repositories',
      },
      {
        rule: '!has(self.replica) || !has(self.replica.source.repository) || (has(self.backup) && self.backup.repositories.exists(r, r.name == self.replica.source.repository))',
        message: 'replica.source.repository must name one of backup.repositories',
      },
      {
        rule: '!has(self.bootstrap.recovery) || !has(self.replica)',
        message: 'a standby cluster (replica) is cloned from its source, not restored (bootstrap.recovery)',
      },
      // Adding replica to a running primary cluster demotes it; removing it would leave the role unsaid.
      { rule: '!has(oldSelf.replica) || has(self.replica)', message: 'replica cannot be removed (set replica.enabled: false to promote)' },
      bootstrapOwnerRule,
    ],
  });

export const memberStatusSchema = z.object({
  name: z.string(),
  role: z.enum(['primary', 'replica', 'unknown']).default('unknown'),
  state: z.string().optional(),
  ready: z.boolean().default(false),
  lagBytes: z.number().int().optional(),
  timeline: z.number().int().optional(),
  volumes: z
    .array(volumeUsageSchema)
    .optional()
    .meta({ description: "Usage of the member's volumes as its ha-node reports it (used bytes rounded up to 1 % of the capacity)." }),
});

export const conditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  // No schema default: kube-apiserver 1.20 rejects a CRD whose default is the empty string (it reads it as null).
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});

export const phases = ['Pending', 'Creating', 'Healthy', 'Degraded', 'Scaling', 'Updating', 'SwitchingOver', 'Deleting'] as const;

export const databaseClusterStatusSchema = z
  .object({
    phase: z.enum(phases).optional(),
    conditions: z
      .array(conditionSchema)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
    observedGeneration: z.number().int().optional(),
    instances: z.number().int().optional(),
    readyInstances: z.number().int().optional(),
    currentPrimary: z.string().optional(),
    systemIdentifier: z
      .string()
      .optional()
      .meta({ description: "The database system identifier of the cluster's data, as its leader reports it (a standby shares its source's)." }),
    targetPrimary: z.string().optional(),
    selector: z.string().optional().meta({ description: 'Label selector of the instance pods (scale subresource).' }),
    appliedConfigHash: z.string().optional().meta({ description: 'Hash of the HA and PostgreSQL settings last accepted by ha-node /config.' }),
    members: z.array(memberStatusSchema).optional(),
    diskUsage: z
      .string()
      .optional()
      .meta({ description: "Used share of each member's data volume (and other volumes), as ha-node reports it; the DISK column of kubectl get." }),
    backup: z
      .object({
        lastScheduled: z
          .object({ full: z.string().optional(), differential: z.string().optional(), incremental: z.string().optional(), initial: z.string().optional() })
          .default({})
          .meta({ description: 'The cron time each schedule last created a Backup for (initial: when the immediate first backup was created).' }),
        backups: z.number().int().optional().meta({ description: 'Backups in the first repository.' }),
        lastBackupTime: z.string().optional(),
      })
      .optional(),
    replica: replicaStatusSchema.optional(),
    pooler: z
      .object({
        instances: z.number().int().meta({ description: 'Pooler pods the Deployment runs.' }),
        readyInstances: z.number().int(),
        paused: z.number().int().optional().meta({ description: 'Poolers paused now (a switchover in progress), as the primary finds them.' }),
        reachingPostgres: z.number().int().optional().meta({ description: 'Poolers whose PostgreSQL accepts connections, as the primary finds them.' }),
        readOnly: z
          .object({
            instances: z.number().int(),
            readyInstances: z.number().int(),
            onReplicas: z
              .number()
              .int()
              .optional()
              .meta({ description: 'Read-only poolers pointed at a replica (the others at the primary), as the primary finds them.' }),
          })
          .optional()
          .meta({ description: 'The read-only pooler (<name>-pooler-ro) when enabled.' }),
      })
      .optional(),
    switchover: z
      .object({
        targetInstance: z.string(),
        result: z.enum(['Pending', 'Succeeded', 'Failed']),
        message: z.string().optional(),
        time: z.string().optional(),
      })
      .optional(),
    roles: managedRolesStatusSchema.optional(),
  })
  .meta({ description: 'Observed state, written by the operator only.' });

export type DatabaseClusterSpec = z.infer<typeof databaseClusterSpecSchema>;
export type PoolerSpec = DatabaseClusterSpec['pooler'];
export type DatabaseClusterSpecInput = z.input<typeof databaseClusterSpecSchema>;
export type DatabaseClusterStatus = z.infer<typeof databaseClusterStatusSchema>;
export type MemberStatus = z.infer<typeof memberStatusSchema>;
export type Condition = z.infer<typeof conditionSchema>;
export type Phase = (typeof phases)[number];

/** Object metadata fields the operator relies on. */
export interface ClusterMetadata {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string | Date;
  finalizers?: string[];
  creationTimestamp?: string | Date;
}

/** A DatabaseCluster whose spec has been parsed (defaults applied). */
export interface DatabaseCluster {
  apiVersion: typeof apiVersion;
  kind: typeof kind;
  metadata: ClusterMetadata;
  spec: DatabaseClusterSpec;
  status?: DatabaseClusterStatus;
}
