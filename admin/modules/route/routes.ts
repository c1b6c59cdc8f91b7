/** Menu rows → Soybean (elegant-router) route objects. Pure, so the shapes are easy to test. */
export interface MenuRow {
  id: number;
  menu_name: string;
  menu_type: string;
  route_name: string;
  route_path: string;
  parent_id: number;
  path_param: string | null;
  route_param: { key: string; value: string }[] | null;
  component: string | null;
  redirect: string | null;
  props: boolean;
  constant: boolean;
  order: number;
  i18n_key: string | null;
  icon: string | null;
  icon_type: string;
  href: string | null;
  multi_tab: boolean;
  keep_alive: boolean;
  hide_in_menu: boolean;
  active_menu_id: number | null;
  fixed_index_in_tab: number | null;
  status_type: string;
}

export interface RouteNode {
  name: string;
  path: string;
  component: string;
  meta: Record<string, unknown>;
  props?: boolean;
  redirect?: string;
  children?: RouteNode[];
}

function defaultComponent(menu: MenuRow): string {
  if (menu.component) return menu.component;
  return menu.parent_id === 0 ? 'layout.base' : `view.${menu.route_name}`;
}

export function toRouteNode(menu: MenuRow, routeNameOf: (id: number) => string | undefined): RouteNode {
  const component = defaultComponent(menu);
  const meta: Record<string, unknown> = {
    title: menu.menu_name,
    i18nKey: menu.i18n_key ?? `route.${menu.route_name}`,
    order: menu.order,
  };
  if (menu.constant) meta.constant = true;
  if (menu.keep_alive) meta.keepAlive = true;
  if (menu.icon) meta[menu.icon_type === '2' ? 'localIcon' : 'icon'] = menu.icon;
  if (menu.href) meta.href = menu.href;
  if (menu.hide_in_menu) meta.hideInMenu = true;
  if (menu.multi_tab) meta.multiTab = true;
  if (menu.fixed_index_in_tab !== null) meta.fixedIndexInTab = menu.fixed_index_in_tab;
  if (menu.route_param?.length) meta.query = menu.route_param;
  const active = menu.active_menu_id ? routeNameOf(menu.active_menu_id) : undefined;
  if (active) meta.activeMenu = active;
  const node: RouteNode = { name: menu.route_name, path: menu.route_path, component, meta };
  if (menu.props) node.props = true;
  if (menu.redirect) node.redirect = menu.redirect;
  return node;
}

/** Builds the route tree from enabled menus; catalogs left without children are dropped. */
export function buildRouteTree(menus: MenuRow[]): RouteNode[] {
  const names = new Map(menus.map((m) => [m.id, m.route_name]));
  const sorted = [...menus].sort((a, b) => a.order - b.order || a.id - b.id);
  const nodes = new Map<number, RouteNode>();
  for (const menu of sorted)
    nodes.set(
      menu.id,
      toRouteNode(menu, (id) => names.get(id)),
    );
  const roots: RouteNode[] = [];
  for (const menu of sorted) {
    const node = nodes.get(menu.id) as RouteNode;
    const parent = nodes.get(menu.parent_id);
    if (parent) (parent.children ??= []).push(node);
    else if (menu.parent_id === 0) roots.push(node);
  }
  const prune = (list: RouteNode[], rows: Map<string, MenuRow>): RouteNode[] =>
    list.filter((node) => {
      if (node.children) node.children = prune(node.children, rows);
      const isCatalog = rows.get(node.name)?.menu_type === '1';
      return !(isCatalog && !node.children?.length);
    });
  return prune(roots, new Map(menus.map((m) => [m.route_name, m])));
}
