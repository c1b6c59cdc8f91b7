import { Code, defaultMessage } from '../http/codes.js';
import type { Locale } from './locale.js';

/**
 * Chinese for the English messages the admin sends. Handlers keep writing English; the envelope
 * is translated on its way out (app.ts), so one catalogue covers every module.
 */
const zhByCode: Record<string, string> = {
  [Code.OK]: 'OK',
  [Code.INTERNAL]: '服务器内部错误',
  [Code.INTEGRITY]: '数据完整性错误',
  [Code.NOT_FOUND]: '资源不存在',
  [Code.VALIDATION]: '请求参数错误',
  [Code.INVALID_TOKEN]: '认证失败，令牌无效或不存在',
  [Code.INVALID_SESSION]: '会话无效',
  [Code.ACCOUNT_DISABLED]: '该用户已被禁用',
  [Code.TOKEN_EXPIRED]: '登录已过期',
  [Code.REFRESH_TOKEN_MISSING]: '刷新令牌无效',
  [Code.NOT_REFRESH_TOKEN]: '该令牌不是刷新令牌',
  [Code.SESSION_INVALIDATED]: 'Token已失效，请重新登录',
  [Code.REFRESH_TOKEN_EXPIRED]: '登录已过期，请重新登录',
  [Code.PASSWORD_CHANGE_REQUIRED]: '请先修改密码（个人中心，或在用户管理中编辑自己的账号）；修改前只能查看，不能更改',
  [Code.API_DISABLED]: '该接口已被禁用',
  [Code.PERMISSION_DENIED]: '权限不足',
  [Code.MISSING_BUTTON_PERMISSION]: '缺少按钮权限',
  [Code.NEED_ANY_BUTTON_PERMISSION]: '需要任一按钮权限',
  [Code.MISSING_ROLE]: '缺少角色',
  [Code.NEED_ANY_ROLE]: '需要任一角色',
  [Code.SUPER_ADMIN_ONLY]: '仅超级管理员可以模拟登录',
  [Code.USER_NO_ROLE]: '该用户未绑定角色',
  [Code.DUPLICATE_RESOURCE]: '资源已存在',
  [Code.DUPLICATE_ROLE_CODE]: '该角色编码已存在',
  [Code.DUPLICATE_USER_EMAIL]: '该邮箱已被注册',
  [Code.DUPLICATE_USER_PHONE]: '该手机号已注册',
  [Code.DUPLICATE_USER_NAME]: '该用户名已存在',
  [Code.DUPLICATE_MENU_ROUTE]: '路由路径已存在',
  [Code.FAIL]: '请求失败',
  [Code.WRONG_CREDENTIALS]: '用户名或密码错误',
  [Code.CAPTCHA_INVALID]: '验证码错误或已过期',
  [Code.CAPTCHA_SEND_FAILED]: '验证码发送失败，请稍后重试',
  [Code.PHONE_NOT_REGISTERED]: '该手机号未注册',
  [Code.OLD_PASSWORD_WRONG]: '原密码错误',
  [Code.TARGET_USER_NOT_FOUND]: '目标用户不存在',
  [Code.RATE_LIMITED]: '请求过于频繁，请稍后再试',
  [Code.PARAM_REQUIRED]: '缺少必填参数',
  [Code.USERNAME_REQUIRED]: '用户名不能为空',
  [Code.PASSWORD_REQUIRED]: '密码不能为空',
  [Code.USER_ROLE_REQUIRED]: '用户角色不能为空',
};

/** Specific English messages (success and failure) with their Chinese. */
const zhExact: Record<string, string> = {
  created: '创建成功',
  updated: '更新成功',
  deleted: '删除成功',
  registered: '注册成功',
  'captcha sent': '验证码已发送',
  'sessions ended': '已强制下线',
  'impersonation ended': '已退出模拟登录',
  'password changed, please log in again': '密码修改成功，请重新登录',
  scaled: '扩缩容已提交',
  'switchover requested': '切换已提交',
  'invalid token': '无效的Token',
  'invalid refresh token': '刷新令牌无效',
  'this token is not an access token': '该令牌不是访问令牌',
  'this token is not a refresh token': '该令牌不是刷新令牌',
  'authentication failed: no bearer token in the request': '认证失败，请求中不存在令牌',
  'target user is disabled': '目标用户已被禁用',
  'not impersonating': '当前未处于模拟登录',
  'you cannot delete your own account': '不能删除自己的账号',
  'captcha cannot be checked right now, try again later': '暂时无法校验验证码，请稍后重试',
  'request body is not valid JSON': '请求体不是合法的 JSON',
  'request body too large': '请求体过大',
  'a referenced resource does not exist or is still in use': '引用的资源不存在或仍在使用中',
  'a value has the wrong format or is too long': '字段格式错误或过长',
  'user does not exist': '用户不存在',
  'user not found': '用户不存在',
  'role not found': '角色不存在',
  'menu not found': '菜单不存在',
  'API not found': '接口不存在',
  'dictionary not found': '字典不存在',
};

/** Messages with a variable part: the captured parts are kept as they are. */
const zhPatterns: [RegExp, (...parts: string[]) => string][] = [
  [/^(.+) not found$/, (what) => `${what} 不存在`],
  [/^no route (\S+) (\S+)$/, (method, path) => `路由不存在: ${method} ${path}`],
  [/^authentication failed: user (\S+) does not exist$/, (id) => `认证失败，用户ID ${id} 不存在`],
  [/^too many login attempts, try again in (\d+) s$/, (s) => `登录尝试过于频繁，请 ${s} 秒后再试`],
  [/^too many captcha requests, try again in (\d+) s$/, (s) => `验证码请求过于频繁，请 ${s} 秒后再试`],
  [/^already exists: (.+)$/, (detail) => `已存在: ${detail}`],
  [/^delete the child menus first: (.+)$/, (names) => `请先删除子菜单: ${names}`],
  [/^(\S+) cannot be deleted$/, (code) => `${code} 不能删除`],
  [/^(\S+) cannot be renamed or disabled$/, (code) => `${code} 不能改名或禁用`],
  [
    /^removed every (API|button) grant of role (\S+) \((\d+)\)$/,
    (what, code, n) => `已移除角色 ${code} 的全部${what === 'API' ? '接口' : '按钮'}权限（${n} 项）`,
  ],
];

/**
 * `msg` in the given locale. English is what handlers write, so it passes unchanged. In Chinese a
 * catalogued message is replaced; an unknown failure message keeps its English detail after the
 * Chinese meaning of its code (field names and values stay readable either way).
 */
export function localiseMessage(msg: string, code: string, locale: Locale): string {
  if (locale === 'en-US') return msg;
  const exact = zhExact[msg];
  if (exact !== undefined) return exact;
  if (msg === defaultMessage[code] && zhByCode[code] !== undefined) return zhByCode[code];
  for (const [pattern, render] of zhPatterns) {
    const match = pattern.exec(msg);
    if (match) return render(...match.slice(1));
  }
  if (code === Code.OK) return msg;
  const meaning = zhByCode[code];
  return meaning ? `${meaning}: ${msg}` : msg;
}
