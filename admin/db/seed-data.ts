/** The menus, buttons and dictionaries an empty database starts with (Soybean's page names). */
export interface SeedMenu {
  routeName: string;
  menuName: string;
  routePath: string;
  component: string;
  menuType?: '1' | '2';
  parent?: string;
  icon?: string;
  order: number;
  constant?: boolean;
  hideInMenu?: boolean;
  props?: boolean;
  activeMenu?: string;
  buttons?: [code: string, desc: string][];
}

const crudButtons = (entity: string, label: string): [string, string][] => [
  [`B_SYSTEM_${entity}_CREATE`, `create ${label}`],
  [`B_SYSTEM_${entity}_UPDATE`, `update ${label}`],
  [`B_SYSTEM_${entity}_DELETE`, `delete ${label}`],
  [`B_SYSTEM_${entity}_BATCH_DELETE`, `batch delete ${label}`],
];

export const seedMenus: SeedMenu[] = [
  {
    routeName: 'login',
    menuName: 'login',
    routePath: '/login/:module(pwd-login|code-login|register|reset-pwd|bind-wechat)?',
    component: 'layout.blank$view.login',
    order: 0,
    constant: true,
    hideInMenu: true,
    props: true,
  },
  { routeName: '403', menuName: '403', routePath: '/403', component: 'layout.blank$view.403', order: 0, constant: true, hideInMenu: true },
  { routeName: '404', menuName: '404', routePath: '/404', component: 'layout.blank$view.404', order: 0, constant: true, hideInMenu: true },
  { routeName: '500', menuName: '500', routePath: '/500', component: 'layout.blank$view.500', order: 0, constant: true, hideInMenu: true },
  { routeName: 'home', menuName: 'home', routePath: '/home', component: 'layout.base$view.home', icon: 'mdi:monitor-dashboard', order: 1 },
  // The avatar menu's "user center" (profile and password); hidden from the side menu, as in fast-soy-admin.
  { routeName: 'user-center', menuName: 'user center', routePath: '/user-center', component: 'layout.base$view.user-center', order: 99, hideInMenu: true },
  {
    routeName: 'manage',
    menuName: 'system manage',
    routePath: '/manage',
    component: 'layout.base',
    menuType: '1',
    icon: 'carbon:cloud-service-management',
    order: 9,
  },
  {
    routeName: 'manage_user',
    menuName: 'user manage',
    routePath: '/manage/user',
    component: 'view.manage_user',
    parent: 'manage',
    icon: 'ic:round-manage-accounts',
    order: 1,
    buttons: crudButtons('USER', 'user'),
  },
  {
    routeName: 'manage_role',
    menuName: 'role manage',
    routePath: '/manage/role',
    component: 'view.manage_role',
    parent: 'manage',
    icon: 'carbon:user-role',
    order: 2,
    buttons: crudButtons('ROLE', 'role'),
  },
  {
    routeName: 'manage_menu',
    menuName: 'menu manage',
    routePath: '/manage/menu',
    component: 'view.manage_menu',
    parent: 'manage',
    icon: 'material-symbols:route',
    order: 3,
    buttons: crudButtons('MENU', 'menu'),
  },
  {
    routeName: 'manage_api',
    menuName: 'API manage',
    routePath: '/manage/api',
    component: 'view.manage_api',
    parent: 'manage',
    icon: 'ant-design:api-outlined',
    order: 4,
  },
  {
    routeName: 'manage_user-detail',
    menuName: 'user detail',
    routePath: '/manage/user-detail/:id',
    component: 'view.manage_user-detail',
    parent: 'manage',
    order: 5,
    hideInMenu: true,
    activeMenu: 'manage_user',
  },
];

/** Buttons not tied to a page (there is no dictionary page in the stock front end). */
export const seedLooseButtons: [string, string][] = crudButtons('DICT', 'dictionary entry');

export const seedDictionaries: { dictType: string; label: string; value: string; order: number }[] = [
  { dictType: 'user_gender', label: 'male', value: '1', order: 1 },
  { dictType: 'user_gender', label: 'female', value: '2', order: 2 },
  { dictType: 'user_gender', label: 'unknown', value: '3', order: 3 },
];

export const seedRoles = [
  { code: 'R_SUPER', name: 'super administrator', desc: 'every permission', home: 'home', dataScope: 'all' },
  { code: 'R_ADMIN', name: 'administrator', desc: 'manages users, roles, menus and dictionaries', home: 'home', dataScope: 'all' },
  { code: 'R_USER', name: 'user', desc: 'default role given at registration', home: 'home', dataScope: 'self' },
] as const;

/** Menus each non-super role sees; R_SUPER sees every menu anyway. */
export const seedRoleMenus: Record<string, string[]> = {
  R_ADMIN: ['home', 'user-center', 'manage', 'manage_user', 'manage_role', 'manage_menu', 'manage_api', 'manage_user-detail'],
  R_USER: ['home', 'user-center'],
};
