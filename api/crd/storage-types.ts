import { z } from 'zod';
import { celStorageBytes, quantityBytes, storageSizePattern } from './quantity.js';
import { storageQuantity } from './schema-helpers.js';

/**
 * Volume growth and usage in the DatabaseCluster API: spec.storage.autoGrow (the operator grows
 * an instance's claim when ha-node reports it fuller than `threshold`, by `step`, up to `max`)
 * and the usage each member reports in status.members[].volumes.
 */

/** A growth step: a percentage of the claim's current size ("20%") or a storage size ("1Gi"). */
export const growthStepPattern = `^([1-9][0-9]?%|100%)$|${storageSizePattern}`;

export const autoGrowSchema = z
  .object({
    threshold: z
      .number()
      .int()
      .min(1)
      .max(99)
      .default(80)
      .meta({ description: 'Used share of a volume, in percent (1–99), from which the operator grows its claim.' }),
    step: z
      .string()
      .max(24)
      .regex(new RegExp(growthStepPattern), 'must be a percentage such as 20% (1–100) or a size such as 1Gi')
      .default('20%')
      .meta({ description: 'How much a claim grows each time: a percentage of its current size ("20%") or a size ("1Gi").' }),
    max: storageQuantity.meta({
      description: 'The largest size auto-grow gives a claim; growth stops there with condition VolumeAutoGrow=False (reason AtMaximum) and a Warning Event.',
    }),
  })
  .meta({
    description:
      "Grow each instance's claim automatically when ha-node reports it fuller than threshold, by step, up to max. The StorageClass must allow expansion.",
  });

export type AutoGrow = z.infer<typeof autoGrowSchema>;

/** CEL and zod: auto-grow's max may not be below the size it grows from (`field`: storage or walStorage). */
export const maxNotBelowSize = (field: string) => ({
  rule: `!has(self.autoGrow) || !self.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || !self.autoGrow.max.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || ${celStorageBytes('self.autoGrow.max')} >= ${celStorageBytes('self.size')}`,
  message: `${field}.autoGrow.max must not be below ${field}.size`,
});

/** CEL transition rule: a size never goes down (volumes only grow). */
export const sizeNeverShrinks = (field: string) => ({
  rule: `!self.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || !oldSelf.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || ${celStorageBytes('self.size')} >= ${celStorageBytes('oldSelf.size')}`,
  message: `${field}.size cannot shrink: volumes only grow`,
});

/** CEL transition rule: the StorageClass of a claim template is fixed at creation. */
export const storageClassFixed = (field: string) => ({
  rule: 'has(self.storageClass) == has(oldSelf.storageClass) && (!has(self.storageClass) || self.storageClass == oldSelf.storageClass)',
  message: `${field}.storageClass cannot change after creation`,
});

/**
 * spec.walStorage: pg_wal on a claim of its own (`pgwal-<pod>`, mounted at
 * /var/lib/postgresql/wal), so WAL cannot fill the data volume nor data the WAL volume. Fixed at
 * creation like storage (claim templates cannot change); its size only grows.
 */
export const walStorageSchema = z
  .object({
    size: storageQuantity.meta({ description: "Size of each instance's WAL volume." }),
    storageClass: z.string().optional().meta({ description: 'StorageClass of the WAL volumes; the cluster default when unset. Fixed at creation.' }),
    autoGrow: autoGrowSchema.optional(),
  })
  .refine((storage) => !maxBelowSize(storage), { message: 'walStorage.autoGrow.max must not be below walStorage.size', path: ['autoGrow', 'max'] })
  .meta({
    description: 'A separate volume per instance for pg_wal. Can be set only when the cluster is created.',
    'x-kubernetes-validations': [storageClassFixed('walStorage'), maxNotBelowSize('walStorage'), sizeNeverShrinks('walStorage')],
  });

export type WalStorage = z.infer<typeof walStorageSchema>;

/** Root rule: walStorage can be neither added nor removed later (the StatefulSet's claim templates are fixed). */
export const walStorageFixed = { rule: 'has(self.walStorage) == has(oldSelf.walStorage)', message: 'walStorage can only be set when the cluster is created' };

export function maxBelowSize(storage: { size: string; autoGrow?: { max: string } }): boolean {
  const max = quantityBytes(storage.autoGrow?.max);
  const size = quantityBytes(storage.size);
  return max !== undefined && size !== undefined && max < size;
}

/** One volume of a member as ha-node measured it (status.members[].volumes). */
export const volumeUsageSchema = z.object({
  volume: z.enum(['data', 'wal']),
  capacityBytes: z.number().int(),
  usedBytes: z.number().int(),
  freeBytes: z.number().int(),
  full: z.boolean().optional().meta({ description: 'Less than 4 MiB (or 1 %) free: PostgreSQL cannot write; a replica is then never promoted.' }),
});

export type VolumeUsageStatus = z.infer<typeof volumeUsageSchema>;
