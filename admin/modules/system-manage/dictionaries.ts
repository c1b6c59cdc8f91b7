import { z } from 'zod';
import { KvKeys, KvUnavailableError } from '../../cache/kv.js';
import { Code } from '../../http/codes.js';
import { addResourceRoutes } from '../../resources/crud.js';
import { BizError, success } from '../../http/envelope.js';
import type { Fields } from '../../resources/records.js';
import { param, type ApiRouter } from '../../http/router.js';
import { optionalText } from '../../http/validate.js';
import type { AdminServices } from '../../services.js';

export const DICT_OPTIONS_TTL_SECONDS = 300;

export const dictionaryFields: Fields = {
  id: { column: 'id', kind: 'id', orderable: true },
  dictType: { column: 'dict_type', kind: 'text', filter: 'eq', orderable: true },
  label: { column: 'label', kind: 'text', filter: 'contains', orderable: true },
  value: { column: 'value', kind: 'text', filter: 'eq', orderable: true },
  order: { column: 'order', kind: 'int', orderable: true },
  status: { column: 'status', kind: 'text', filter: 'eq' },
  remark: { column: 'remark', kind: 'text' },
};

const dictType = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'letters, digits and _ . : - (max 100)');
const status = z.enum(['1', '2']);
const createDictionary = z.object({
  dictType,
  label: z.string().trim().min(1).max(100),
  value: z.string().trim().min(1).max(100),
  order: z.number().int().optional(),
  status: status.optional(),
  remark: optionalText(500),
});
const updateDictionary = createDictionary.partial();

/** /dictionaries: soft-deleted standard routes plus cached options per type. */
export function addDictionaryRoutes(router: ApiRouter, services: AdminServices): void {
  const { db, kv, logger } = services;

  const dropCachedOptions = async (types: string[]): Promise<void> => {
    if (!types.length) return;
    await kv
      .run((r) => r.del(...types.map(KvKeys.dictOptions)))
      .catch((e: Error) => logger.warn({ err: e.message, types }, 'dictionary options cache not cleared; it expires within 5 minutes'));
  };

  addResourceRoutes(router, services, {
    path: '/dictionaries',
    table: 'dictionaries',
    noun: 'dictionary entry',
    fields: dictionaryFields,
    createSchema: createDictionary,
    updateSchema: updateDictionary,
    softDelete: true,
    defaultOrder: 'dict_type ASC, "order" ASC',
    buttons: { create: 'B_SYSTEM_DICT_CREATE', update: 'B_SYSTEM_DICT_UPDATE', delete: 'B_SYSTEM_DICT_DELETE', batchDelete: 'B_SYSTEM_DICT_BATCH_DELETE' },
    hooks: {
      async beforeWrite(_input, action, id) {
        // An update may move the entry to another type: the old type's options change too.
        if (action === 'update' && id !== undefined) {
          const { rows } = await db.query<{ dict_type: string }>('SELECT dict_type FROM dictionaries WHERE id = $1', [id]);
          await dropCachedOptions(rows.map((r) => r.dict_type));
        }
        return {};
      },
      async afterCommit(changed) {
        // Soft delete keeps the rows, so their types can always be read back.
        const { rows } = await db.query<{ dict_type: string }>('SELECT DISTINCT dict_type FROM dictionaries WHERE id = ANY($1)', [changed]);
        await dropCachedOptions(rows.map((r) => r.dict_type));
      },
    },
  });

  router.get(
    '/dictionaries/{dictType}/options',
    { summary: 'Enabled options of a dictionary type (cached 5 minutes)', tags: ['dictionaries'] },
    async (req) => {
      const checked = dictType.safeParse(param(req, 'dictType'));
      if (!checked.success) throw new BizError(Code.VALIDATION, 'dictType: letters, digits and _ . : - (max 100)');
      const type = checked.data;
      const key = KvKeys.dictOptions(type);
      const cached = await kv
        .run((r) => r.get(key))
        .catch((e: unknown) => {
          if (e instanceof KvUnavailableError) return null;
          throw e;
        });
      if (cached) return success(JSON.parse(cached) as unknown);
      const { rows } = await db.query<{ label: string; value: string }>(
        `SELECT label, value FROM dictionaries WHERE dict_type = $1 AND status = '1' AND deleted_at IS NULL ORDER BY "order", id`,
        [type],
      );
      await kv.run((r) => r.set(key, JSON.stringify(rows), 'EX', DICT_OPTIONS_TTL_SECONDS)).catch(() => undefined);
      return success(rows);
    },
  );
}
