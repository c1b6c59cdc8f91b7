import { dirname, join } from 'node:path';
import { writtenParameters } from '../../postgres/config-files.js';
import { writePrivateFile } from '../../postgres/runner.js';
import {
  catalogFrom,
  catalogText,
  fileSettingErrorsSql,
  loadCatalog,
  rejectionText,
  screenParameters,
  settingsCatalogSql,
} from '../../postgres/settings-catalog.js';
import type { SettingRule } from '../../postgres/setting-rules.js';
import type { LoopContext } from '../loop-context.js';
import type { ConfigError } from '../snapshot.js';
import { serverParameters } from '../sync/standby-replies.js';
import { configErrorsFound, parametersScreened } from '../state.js';

/**
 * Keeps values PostgreSQL would refuse out of postgresql.conf. The dynamic configuration's
 * parameters are screened against the server's pg_settings (server-independent checks only until
 * it has run); a refused one keeps its last good value and is reported in the node document, and
 * what the server itself reports in pg_file_settings after a write is reported beside it.
 */
export function screenDynamicParameters(ctx: LoopContext): void {
  const { pg, state } = ctx;
  // The first time since ha-node started: what the server last ran with stands in for the values
  // in memory, and the catalog saved then for the server that may be down now.
  const first = parametersScreened(state);
  if (first && !pg.settingsCatalog) pg.learnSettingsCatalog(loadCatalog(catalogFile(ctx)));
  const lastGood = first ? { ...writtenParameters(pg.settings.dataDir), ...pg.dynamicParameters } : pg.dynamicParameters;
  const screened = screenParameters(serverParameters(state.config), lastGood, pg.settingsCatalog);
  pg.configure({ dynamic: screened.parameters });
  const refused: ConfigError[] = screened.rejected.map((r) => ({ parameter: r.name, source: 'ha-node', error: rejectionText(r) }));
  const before = (state.snapshot.configErrors ?? []).filter((e) => e.source === 'ha-node');
  if (JSON.stringify(before) !== JSON.stringify(refused) && refused.length > 0) {
    ctx.options.logger.error(
      { refused: refused.map((r) => r.error) },
      'the dynamic configuration holds parameter values PostgreSQL would refuse; keeping the last good values',
    );
  }
  setErrors(ctx, 'ha-node', refused);
}

/** Reads pg_settings of the running server (kept when the query fails: the last catalog still holds). */
export async function refreshSettingsCatalog(ctx: LoopContext): Promise<void> {
  const rows = await ctx.pg.query<SettingRule>(settingsCatalogSql).catch(() => undefined);
  if (!rows || rows.length === 0) return;
  const catalog = catalogFrom(rows);
  const text = catalogText(catalog);
  if (ctx.pg.settingsCatalog && catalogText(ctx.pg.settingsCatalog) === text) return;
  ctx.pg.learnSettingsCatalog(catalog);
  try {
    writePrivateFile(catalogFile(ctx), text, ctx.pg.runAs);
  } catch (error) {
    ctx.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not save pg_settings beside the data directory');
  }
}

/** Beside the data directory, on the same volume: pg_basebackup and pg_rewind leave it alone. */
function catalogFile(ctx: LoopContext): string {
  return join(dirname(ctx.pg.settings.dataDir), 'keelson-pg-settings.json');
}

/** What the server found wrong in postgresql.conf as written now (pg_file_settings.error). */
export async function readFileSettingErrors(ctx: LoopContext): Promise<void> {
  const rows = await ctx.pg.query<{ name: string | null; error: string }>(fileSettingErrorsSql).catch(() => undefined);
  if (!rows) return;
  const errors: ConfigError[] = rows.map((row) => ({ parameter: row.name ?? undefined, source: 'postgresql', error: row.error }));
  if (errors.length > 0)
    ctx.options.logger.error({ errors: errors.map((e) => `${e.parameter ?? ''}: ${e.error}`) }, 'PostgreSQL could not apply postgresql.conf');
  setErrors(ctx, 'postgresql', errors);
}

function setErrors(ctx: LoopContext, source: ConfigError['source'], errors: ConfigError[]): void {
  const kept = (ctx.state.snapshot.configErrors ?? []).filter((e) => e.source !== source);
  const all = [...kept, ...errors];
  configErrorsFound(ctx.state, all.length > 0 ? all : undefined);
}
