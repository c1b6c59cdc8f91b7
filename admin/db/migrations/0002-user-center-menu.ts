import type { Migration } from '../migrate.js';

/**
 * Databases seeded before the user-center page existed get its menu, granted to every role that
 * holds the home page (every signed-in user may edit their own profile and password). An empty
 * database is left to the seed, which includes it.
 */
export const userCenterMenu: Migration = {
  version: 2,
  name: 'user-center-menu',
  sql: `
INSERT INTO menus (menu_name, menu_type, route_name, route_path, parent_id, component, "order", hide_in_menu)
SELECT 'user center', '2', 'user-center', '/user-center', 0, 'layout.base$view.user-center', 99, true
WHERE EXISTS (SELECT 1 FROM roles)
  AND NOT EXISTS (SELECT 1 FROM menus WHERE route_name = 'user-center' OR route_path = '/user-center');
INSERT INTO role_menus (role_id, menu_id)
SELECT DISTINCT rm.role_id, uc.id FROM role_menus rm
JOIN menus home ON home.id = rm.menu_id AND home.route_name = 'home'
JOIN menus uc ON uc.route_name = 'user-center'
ON CONFLICT DO NOTHING;
`,
};
