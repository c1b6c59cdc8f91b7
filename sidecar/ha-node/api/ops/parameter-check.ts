import type { Logger } from '../../../../lib/log.js';
import type { ConfigProblem } from '../../ops/config-problem.js';
import type { ParameterValue } from '../../postgres/conf.js';
import type { PostgresInstance } from '../../postgres/instance.js';
import { catalogFrom, settingsCatalogSql, type SettingsCatalog } from '../../postgres/settings-catalog.js';
import { settingValueProblem, type SettingRule } from '../../postgres/setting-rules.js';
import type { ParameterCheck } from './config-cas.js';

/**
 * PATCH/PUT /config checks changed parameter values against this member's server (pg_settings,
 * read once and then kept fresh by the HA loop on every configuration change). Without a running
 * server nor a catalog read before, only the server-independent checks of config-validate.ts
 * apply, and the members screen the values again before writing them.
 */
export function serverParameterCheck(pg: PostgresInstance | undefined, logger: Logger): ParameterCheck | undefined {
  if (!pg) return undefined;
  return async (parameters) => {
    if (Object.keys(parameters).length === 0) return [];
    const catalog = pg.settingsCatalog ?? (await readCatalog(pg, logger));
    if (!catalog) return [];
    return problemsAgainst(catalog, parameters);
  };
}

async function readCatalog(pg: PostgresInstance, logger: Logger): Promise<SettingsCatalog | undefined> {
  if (!pg.isRunning()) return undefined;
  try {
    pg.learnSettingsCatalog(catalogFrom(await pg.query<SettingRule>(settingsCatalogSql)));
    return pg.settingsCatalog;
  } catch (error) {
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not read pg_settings to check parameter values');
    return undefined;
  }
}

export function problemsAgainst(catalog: SettingsCatalog, parameters: Record<string, ParameterValue>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    const message = settingValueProblem(name, value, catalog.get(name.toLowerCase()));
    if (message) problems.push({ field: `db.parameters.${name}`, message: `${message} (got ${JSON.stringify(value)})` });
  }
  return problems;
}
