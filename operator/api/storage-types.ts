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
    threshold: z.number().int().min(1).max(99).default(80).meta({ description: 'Used share of a volume, in percent (1–99), from which the operator grows its claim.' }),
    step: z
      .string()
      .max(24)
      .regex(new RegExp(growthStepPattern), 'must be a percentage such as 20% (1–100) or a size such as 1Gi')
      .default('20%')
      .meta({ description: 'How much a claim grows each time: a percentage of its current size ("20%") or a size ("1Gi").' }),
    max: storageQuantity.meta({ description: 'The largest size auto-grow gives a claim; growth stops there with condition VolumeAutoGrow=False (reason AtMaximum) and a Warning Event.' }),
  })
  .meta({ description: 'Grow each instance\'s claim automatically when ha-node reports it fuller than threshold, by step, up to max. The StorageClass must allow expansion.' });

export type AutoGrow = z.infer<typeof autoGrowSchema>;

/** CEL and zod: auto-grow's max may not be below the size it grows from. */
export const maxNotBelowSize = {
  rule: `!has(self.autoGrow) || !self.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || !self.autoGrow.max.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || ${celStorageBytes('self.autoGrow.max')} >= ${celStorageBytes('self.size')}`,
  message: 'storage.autoGrow.max must not be below storage.size',
};

/** CEL transition rule: a size never goes down (volumes only grow). */
export const sizeNeverShrinks = {
  rule: `!self.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || !oldSelf.size.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || ${celStorageBytes('self.size')} >= ${celStorageBytes('oldSelf.size')}`,
  message: 'storage.size cannot shrink: volumes only grow',
};

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
