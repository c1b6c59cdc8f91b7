import type { Logger } from '../../lib/log.js';
import { generatePassword } from '../auth/generated-password.js';
import type { PasswordHasher } from '../auth/passwords.js';
import { withTransaction, type Db } from './pool.js';
import { seedDictionaries, seedLooseButtons, seedMenus, seedRoleMenus, seedRoles } from './seed-data.js';

export interface SeedOptions {
  initialUsername: string;
  initialPassword?: string;
}

export interface SeedResult {
  seeded: boolean;
  /** Only when the password was generated here; it is shown once in the log and never stored in clear. */
  generatedPassword?: string;
}

/**
 * Fills an empty database (no roles yet): roles, the super administrator, menus with their buttons,
 * role grants (R_ADMIN gets every system-manage API) and a few dictionary entries. Runs once:
 * a database that has roles is left alone. Call after the API table has been reconciled.
 */
export async function seedIfEmpty(db: Db, passwords: PasswordHasher, options: SeedOptions, logger: Logger): Promise<SeedResult> {
  const generated = options.initialPassword ? undefined : generatePassword();
  const password = options.initialPassword ?? (generated as string);
  const hash = await passwords.hash(password);
  const seeded = await withTransaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(7246002)');
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM roles');
    if (Number(rows[0].n) > 0) return false;
    const menuIds = new Map<string, number>();
    for (const m of seedMenus) {
      const parentId = m.parent ? (menuIds.get(m.parent) ?? 0) : 0;
      const inserted = await client.query<{ id: number }>(
        `INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, icon, "order", constant, hide_in_menu, props, active_menu_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
        [
          m.menuName,
          m.menuType ?? '2',
          m.routeName,
          m.routePath,
          parentId,
          m.component,
          m.icon ?? null,
          m.order,
          m.constant ?? false,
          m.hideInMenu ?? false,
          m.props ?? false,
          m.activeMenu ? (menuIds.get(m.activeMenu) ?? null) : null,
        ],
      );
      menuIds.set(m.routeName, inserted.rows[0].id);
      for (const [code, desc] of m.buttons ?? []) {
        await client.query('INSERT INTO buttons (button_code, button_desc, menu_id) VALUES ($1, $2, $3)', [code, desc, inserted.rows[0].id]);
      }
    }
    for (const [code, desc] of seedLooseButtons) await client.query('INSERT INTO buttons (button_code, button_desc) VALUES ($1, $2)', [code, desc]);
    for (const role of seedRoles) {
      const inserted = await client.query<{ id: number }>(
        'INSERT INTO roles (role_name, role_code, role_desc, data_scope, home_menu_id) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [role.name, role.code, role.desc, role.dataScope, menuIds.get(role.home) ?? null],
      );
      const roleId = inserted.rows[0].id;
      const menus = (seedRoleMenus[role.code] ?? []).map((name) => menuIds.get(name)).filter((id): id is number => id !== undefined);
      if (menus.length) await client.query('INSERT INTO role_menus (role_id, menu_id) SELECT $1, unnest($2::int[])', [roleId, menus]);
      if (role.code === 'R_ADMIN') {
        await client.query(`INSERT INTO role_buttons (role_id, button_id) SELECT $1, id FROM buttons WHERE button_code LIKE 'B\\_SYSTEM\\_%'`, [roleId]);
        await client.query(`INSERT INTO role_apis (role_id, api_id) SELECT $1, id FROM apis WHERE api_path LIKE '/api/v1/system-manage/%'`, [roleId]);
      }
    }
    const user = await client.query<{ id: number }>(
      `INSERT INTO users (user_name, password, nick_name, must_change_password) VALUES ($1, $2, $1, true) RETURNING id`,
      [options.initialUsername, hash],
    );
    await client.query(`INSERT INTO user_roles (user_id, role_id) SELECT $1, id FROM roles WHERE role_code = 'R_SUPER'`, [user.rows[0].id]);
    for (const d of seedDictionaries) {
      await client.query('INSERT INTO dictionaries (dict_type, label, value, "order") VALUES ($1, $2, $3, $4)', [d.dictType, d.label, d.value, d.order]);
    }
    return true;
  });
  if (!seeded) return { seeded: false };
  logger.info({ userName: options.initialUsername }, 'seeded an empty database: roles R_SUPER, R_ADMIN, R_USER, menus, buttons, API grants');
  if (generated) {
    // Printed exactly once, as the issue asks; the user must change it at first login.
    logger.warn(`initial administrator "${options.initialUsername}" has the generated password ${generated} (shown once; it must be changed at first login)`);
  }
  return { seeded: true, generatedPassword: generated };
}
