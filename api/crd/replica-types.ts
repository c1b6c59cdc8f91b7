import { z } from 'zod';
import { repositoryName } from './backup-types.js';
import { dnsLabel, duration } from './schema-helpers.js';

/**
 * spec.replica of the DatabaseCluster API: the cluster is a standby of another PostgreSQL (a
 * DatabaseCluster, or any server by host and port) while `enabled`; `enabled: false` promotes it.
 * Part of the zod source the CRD is generated from (types.ts); the CEL rules are repeated in the
 * refinement so servers without CEL refuse the same specs.
 */

const hostName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?$/, 'must be a host name or IP address');

const sourceRules = [
  {
    rule: 'has(self.cluster) != has(self.host) || (has(self.repository) && !has(self.cluster) && !has(self.host))',
    message: 'replica.source needs exactly one of cluster or host, or repository alone',
  },
  { rule: '!has(self.host) || has(self.credentialsSecret)', message: 'replica.source.host needs credentialsSecret (the replication user of the source)' },
  { rule: '!has(self.namespace) || has(self.cluster)', message: 'replica.source.namespace goes with cluster' },
  { rule: '!has(self.port) || has(self.host)', message: 'replica.source.port goes with host' },
  {
    rule: '!has(self.repository) || has(self.cluster) || has(self.stanza)',
    message: "replica.source.repository needs stanza (the source cluster's name) when no cluster is named",
  },
  { rule: '!has(self.stanza) || has(self.repository)', message: 'replica.source.stanza goes with repository' },
  {
    rule: 'has(self.cluster) || has(self.host) || has(self.credentialsSecret)',
    message: "replica.source.repository alone needs credentialsSecret (the source's replication user: the restored copy carries its password)",
  },
];

export const replicaSourceSchema = z
  .object({
    cluster: dnsLabel.optional().meta({ description: 'A DatabaseCluster to follow (through its -rw Service).' }),
    namespace: dnsLabel.optional().meta({ description: "The source DatabaseCluster's namespace; this cluster's when unset." }),
    host: hostName.optional().meta({ description: 'A PostgreSQL server to follow by address.' }),
    port: z.number().int().min(1).max(65535).optional().meta({ description: 'Port of host (5432 when unset).' }),
    credentialsSecret: dnsLabel
      .optional()
      .meta({ description: "Secret (keys username, password) of the replication user of host; it becomes this cluster's replication credentials." }),
    repository: repositoryName.optional().meta({
      description:
        "Name of one of spec.backup.repositories holding the source's backups and WAL archive: the first instance restores the newest backup (instead of pg_basebackup) and the standby leader replays the archive; with cluster or host it streams and falls back to the archive.",
    }),
    stanza: dnsLabel.optional().meta({ description: "The source's stanza in repository (the source DatabaseCluster's name); source.cluster when unset." }),
  })
  .superRefine((source, ctx) => {
    const checks: [boolean, string][] = [
      [
        (source.cluster === undefined) !== (source.host === undefined) ||
          (source.repository !== undefined && source.cluster === undefined && source.host === undefined),
        sourceRules[0]!.message,
      ],
      [source.host === undefined || source.credentialsSecret !== undefined, sourceRules[1]!.message],
      [source.namespace === undefined || source.cluster !== undefined, sourceRules[2]!.message],
      [source.port === undefined || source.host !== undefined, sourceRules[3]!.message],
      [source.repository === undefined || source.cluster !== undefined || source.stanza !== undefined, sourceRules[4]!.message],
      [source.stanza === undefined || source.repository !== undefined, sourceRules[5]!.message],
      [source.cluster !== undefined || source.host !== undefined || source.credentialsSecret !== undefined, sourceRules[6]!.message],
    ];
    for (const [ok, message] of checks) if (!ok) ctx.addIssue({ code: 'custom', message });
  })
  .meta({
    description: 'What the standby follows: a DatabaseCluster, a host with credentials, a backup repository, or either of the first two with a repository.',
    'x-kubernetes-validations': sourceRules,
  });

export const promotions = ['Immediate', 'AfterSourceDemotion'] as const;

const promotionRule = {
  rule: "self.promotion != 'AfterSourceDemotion' || has(self.source.cluster)",
  message: 'replica.promotion AfterSourceDemotion needs a DatabaseCluster source (source.cluster)',
};

export const replicaSchema = z
  .object({
    enabled: z.boolean().default(true).meta({
      description:
        'Run as a standby of source. false promotes the cluster; true on a running primary cluster demotes it into a standby of source without re-cloning.',
    }),
    source: replicaSourceSchema,
    minApplyDelay: duration.optional().meta({ description: 'Replay WAL this long after it was written on the source (recovery_min_apply_delay).' }),
    promotion: z.enum(promotions).default('Immediate').meta({
      description:
        'How enabled: false promotes. Immediate: at once (the source may be gone). AfterSourceDemotion: the controlled swap — wait until the source DatabaseCluster, set to follow this one, has demoted, replay up to its shutdown checkpoint, then promote; no acknowledged commit of the source is lost.',
    }),
  })
  .superRefine((replica, ctx) => {
    if (replica.promotion === 'AfterSourceDemotion' && replica.source.cluster === undefined)
      ctx.addIssue({ code: 'custom', message: promotionRule.message, path: ['promotion'] });
  })
  .meta({
    description:
      'A standby cluster: its first instance is cloned from the source with pg_basebackup, its leader (the standby leader) streams from the source and never promotes, the other instances cascade from it. The -rw Service reaches the standby leader, read-only, until enabled is false.',
    // The source may change: ha-node re-points the standby leader; another database system is refused by the operator.
    'x-kubernetes-validations': [promotionRule],
  });

export type ReplicaSpec = z.infer<typeof replicaSchema>;
export type ReplicaSource = z.infer<typeof replicaSourceSchema>;

/** The steps of a change of role, in the order a controlled swap passes them (reconcile/replica-role.ts). */
export const roleSteps = ['WaitingForPeer', 'Demoting', 'Following', 'WaitingForSourceDemotion', 'CatchingUp', 'Promoting', 'Promoted'] as const;
export type RoleStep = (typeof roleSteps)[number];

export const demotionSchema = z
  .object({
    systemIdentifier: z.string(),
    timeline: z.number().int(),
    checkpointLsn: z.string().meta({ description: 'The shutdown checkpoint the new primary replayed past before it promoted.' }),
    at: z.string(),
  })
  .meta({ description: 'The last demotion of this cluster from primary into standby, as ha-node recorded it.' });

export const replicaStatusSchema = z
  .object({
    role: z.enum(['standby', 'primary']).meta({ description: 'standby while following the source; primary once promoted (or until a demotion is done).' }),
    source: z.string().optional().meta({ description: 'What the standby follows (namespace/cluster or host:port).' }),
    step: z.enum(roleSteps).optional().meta({ description: 'Where a change of role stands: Following and Promoted are at rest, the others in progress.' }),
    message: z.string().optional(),
    lagBytes: z
      .number()
      .int()
      .optional()
      .meta({ description: "Bytes the standby leader's replay is behind the source's WAL end (as its WAL receiver last heard it)." }),
    sourceTimeline: z.number().int().optional().meta({ description: "The source's timeline the standby leader receives." }),
    demotion: demotionSchema.optional(),
    promotedAt: z.string().optional(),
  })
  .meta({ description: 'Standby cluster state, present when spec.replica is set.' });

export type ReplicaStatus = z.infer<typeof replicaStatusSchema>;

const durationUnitsMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A spec duration ("90s", "1m30s") in milliseconds, as recovery_min_apply_delay takes it. */
export function durationMs(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) total += Number(amount) * durationUnitsMs[unit!]!;
  return total;
}
