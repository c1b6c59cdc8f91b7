/**
 * The trees the role grant dialogs show (menus, buttons, APIs), built as pure functions from rows.
 *
 * Each node carries what both Soybean clients read: the current one keys its tree by `key`, shows
 * `label` and ticks leaves whose `resourceId` the role holds (`isParent` nodes have none); the
 * older one keys by `id` (menus and buttons also read `pId`, APIs label by `summary`). Group nodes
 * that are no grantable record (API tags, menus above buttons) get ids with a `:`, which no sqid
 * has, so a grant list echoing them back is recognised (`isGroupKey`) and they are dropped.
 */

export interface AuthTreeNode {
  key: string;
  id: string;
  label: string;
  isParent: boolean;
  resourceId: string | null;
  children?: AuthTreeNode[];
  [extra: string]: unknown;
}

/** Tree ids that name a group rather than a record (see above). */
export const isGroupKey = (value: string): boolean => value.includes(':');

export interface MenuRow {
  id: number;
  parentId: number;
  menuName: string;
  menuType: string;
  routeName: string;
  hideInMenu: boolean;
}

/** Nests nodes under their parents by id; a node whose parent is not among them is a root. */
function nest<T extends { children?: T[] }>(items: { id: number; parentId: number; node: T }[]): T[] {
  const byId = new Map(items.map((item) => [item.id, item.node]));
  const roots: T[] = [];
  for (const item of items) {
    const parent = item.parentId !== item.id ? byId.get(item.parentId) : undefined;
    if (parent) (parent.children ??= []).push(item.node);
    else roots.push(item.node);
  }
  return roots;
}

/**
 * The menu grant tree: every given menu (the caller leaves out constant pages), catalogs that end
 * up with no child dropped. A catalog, or a page with children, is a parent; only leaves are
 * grantable (`resourceId`), as the client collects ticked leaves and the server adds ancestors.
 */
export function menuGrantTree(rows: MenuRow[], encode: (id: number) => string): AuthTreeNode[] {
  const items = rows.map((row) => {
    const id = encode(row.id);
    const node: AuthTreeNode = {
      key: `menu:${id}`,
      id,
      label: row.menuName,
      pId: row.parentId > 0 ? encode(row.parentId) : 0,
      isParent: false,
      resourceId: id,
      routeName: row.routeName,
      menuType: row.menuType,
      meta: { hidden: row.hideInMenu },
    };
    return { id: row.id, parentId: row.parentId, node, catalog: row.menuType === '1' };
  });
  const catalogs = new Set(items.filter((item) => item.catalog).map((item) => item.node));
  const settle = (nodes: AuthTreeNode[]): AuthTreeNode[] =>
    nodes.flatMap((node) => {
      const children = settle(node.children ?? []);
      if (catalogs.has(node) && !children.length) return [];
      const isParent = catalogs.has(node) || children.length > 0;
      const settled: AuthTreeNode = { ...node, isParent, resourceId: isParent ? null : node.resourceId };
      if (children.length) settled.children = children;
      else delete settled.children;
      return [settled];
    });
  return settle(nest(items));
}

export interface ButtonRow {
  id: number;
  menuId: number | null;
  buttonCode: string;
  buttonDesc: string;
}

/** The button grant tree: menus (as groups) down to those holding buttons, buttons as leaves. */
export function buttonGrantTree(menus: Pick<MenuRow, 'id' | 'parentId' | 'menuName'>[], buttons: ButtonRow[], encode: (id: number) => string): AuthTreeNode[] {
  const group = (key: string, label: string, pId: string | 0): AuthTreeNode => ({ key, id: key, label, pId, isParent: true, resourceId: null, kind: 'menu' });
  const items = menus.map((m) => ({
    id: m.id,
    parentId: m.parentId,
    node: group(`menu:${encode(m.id)}`, m.menuName, m.parentId > 0 ? `menu:${encode(m.parentId)}` : 0),
  }));
  const byId = new Map(items.map((item) => [item.id, item.node]));
  const loose = group('menu:other', 'other buttons', 0);
  for (const b of buttons) {
    const owner = (b.menuId !== null ? byId.get(b.menuId) : undefined) ?? loose;
    const id = encode(b.id);
    const label = b.buttonDesc ? `${b.buttonCode} (${b.buttonDesc})` : b.buttonCode;
    (owner.children ??= []).push({ key: `button:${id}`, id, label, pId: owner.id, isParent: false, resourceId: id, kind: 'button', buttonCode: b.buttonCode });
  }
  const hasButtons = (node: AuthTreeNode): boolean => node.kind === 'button' || (node.children ?? []).some(hasButtons);
  const prune = (list: AuthTreeNode[]): AuthTreeNode[] => list.filter(hasButtons).map((n) => (n.children ? { ...n, children: prune(n.children) } : n));
  const roots = nest(items);
  return prune(loose.children ? [...roots, loose] : roots);
}

export interface ApiRow {
  id: number;
  apiPath: string;
  apiMethod: string;
  summary: string;
  tags: string[];
  statusType: string;
}

/**
 * The API grant tree: one group per first tag, APIs as leaves. A disabled API stays tickable (no
 * `disabled` flag): the client drops disabled leaves from what it saves, which would silently
 * revoke a grant that is only switched off for now.
 */
export function apiGrantTree(rows: ApiRow[], encode: (id: number) => string): AuthTreeNode[] {
  const groups = new Map<string, AuthTreeNode>();
  for (const row of rows) {
    const tag = row.tags[0] ?? 'other';
    let group = groups.get(tag);
    if (!group) {
      const key = `api-tag:${tag}`;
      group = { key, id: key, label: tag, summary: tag, isParent: true, resourceId: null, children: [] };
      groups.set(tag, group);
    }
    const id = encode(row.id);
    const label = row.summary || `${row.apiMethod.toUpperCase()} ${row.apiPath}`;
    group.children?.push({
      key: `api:${id}`,
      id,
      label,
      summary: label,
      isParent: false,
      resourceId: id,
      apiMethod: row.apiMethod,
      apiPath: row.apiPath,
      statusType: row.statusType,
    });
  }
  return [...groups.values()];
}
