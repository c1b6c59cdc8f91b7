import { isIP } from 'node:net';
import { hbaTlsPolicyProblem } from './pg-hba-tls.js';

/**
 * Checks of user-supplied pg_hba.conf lines (PostgreSQL 13–18 syntax) before they reach a data
 * directory: a line PostgreSQL rejects makes a reload keep the old rules and a restart fail, so
 * the operator's spec validation and ha-node's PATCH /config both refuse it with this message.
 */

const connectionTypes = new Set(['local', 'host', 'hostssl', 'hostnossl', 'hostgssenc', 'hostnogssenc']);
const methods = new Set(['trust', 'reject', 'scram-sha-256', 'md5', 'password', 'gss', 'ident', 'peer', 'ldap', 'radius', 'cert', 'pam']);
const addressKeywords = new Set(['all', 'samehost', 'samenet']);
const hostname = /^\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const option = /^[A-Za-z_][A-Za-z0-9_]*=.*$/s;

/** Longest line accepted: far above any real rule, low enough to bound the file. */
export const maxHbaLineLength = 1000;

/** Splits a line into tokens as PostgreSQL does: blanks separate, double quotes group, # starts a comment. */
export function hbaTokens(line: string): string[] | string {
  const tokens: string[] = [];
  let current = '';
  let quoted = false;
  let inToken = false;
  for (const char of line) {
    if (quoted) {
      if (char === '"') quoted = false;
      else current += char;
      continue;
    }
    if (char === '#') break;
    if (char === ' ' || char === '\t') {
      if (inToken) tokens.push(current);
      current = '';
      inToken = false;
      continue;
    }
    if (char === '"') quoted = true;
    else current += char;
    inToken = true;
  }
  if (quoted) return 'has an unterminated quoted string';
  if (inToken) tokens.push(current);
  return tokens;
}

function checkAddress(tokens: string[]): { rest: string[] } | string {
  const [address, ...after] = tokens;
  if (address === undefined) return 'is missing the client address';
  if (address.includes('/')) {
    const [ip, bits, extra] = address.split('/');
    const family = isIP(ip ?? '');
    if (!family || extra !== undefined) return `has an invalid CIDR address "${address}"`;
    const max = family === 4 ? 32 : 128;
    if (!/^\d{1,3}$/.test(bits ?? '') || Number(bits) > max) return `has an invalid CIDR mask length in "${address}" (0 to ${max})`;
    return { rest: after };
  }
  const family = isIP(address);
  if (family) {
    const [mask, ...rest] = after;
    if (mask === undefined || isIP(mask) !== family) return `gives the IP address "${address}" without a CIDR length or a netmask of the same family`;
    return { rest };
  }
  if (addressKeywords.has(address) || (address.length <= 253 && hostname.test(address))) return { rest: after };
  return `has an invalid client address "${address}"`;
}

function checkMethod(type: string, tokens: string[]): string | undefined {
  const [method, ...options] = tokens;
  if (method === undefined) return 'is missing the authentication method';
  if (!methods.has(method)) return `has an unknown authentication method "${method}"`;
  if (method === 'peer' && type !== 'local') return 'uses "peer", which only local connections support';
  if (method === 'cert' && type !== 'hostssl') return 'uses "cert", which only hostssl connections support';
  const bad = options.find((o) => !option.test(o));
  if (bad !== undefined) return `has an option "${bad}" that is not name=value`;
  if (method === 'ldap' && !options.some((o) => /^ldap(server|url)=/.test(o))) return 'uses "ldap" without ldapserver or ldapurl';
  if (method === 'radius' && !(options.some((o) => o.startsWith('radiusservers=')) && options.some((o) => o.startsWith('radiussecrets=')))) {
    return 'uses "radius" without radiusservers and radiussecrets';
  }
  return undefined;
}

export interface HbaContext {
  /** The server runs with ssl = on; without it PostgreSQL refuses hostssl lines. */
  ssl: boolean;
  /** Every remote connection must use TLS: lines that would weaken that are refused too (pg-hba-tls.ts). */
  requireTls?: boolean;
}

/** Why PostgreSQL would refuse this line, or undefined when it is a valid rule, a comment or blank. */
export function hbaLineProblem(line: string, context: HbaContext = { ssl: false }): string | undefined {
  if (/[\r\n\0]/.test(line)) return 'must be a single line';
  if (line.length > maxHbaLineLength) return `is longer than ${maxHbaLineLength} characters`;
  const tokens = hbaTokens(line);
  if (typeof tokens === 'string') return tokens;
  if (tokens.length === 0) return undefined;
  const [type, database, user, ...rest] = tokens as [string, ...string[]];
  if (type.startsWith('include')) return `uses "${type}": only rules are accepted, not include directives`;
  if (!connectionTypes.has(type)) return `has an unknown connection type "${type}"`;
  if (type === 'hostssl' && !context.ssl) return 'is a hostssl rule, which needs the parameter ssl = on';
  if (!database) return 'is missing the database';
  if (!user) return 'is missing the user';
  if ([database, user].some((t) => t.split(',').some((item) => item.startsWith('@')))) return 'names an @file: only rules are accepted, not included files';
  let methodTokens = rest;
  if (type !== 'local') {
    const address = checkAddress(rest);
    if (typeof address === 'string') return address;
    methodTokens = address.rest;
  }
  return checkMethod(type, methodTokens) ?? (context.requireTls ? hbaTlsPolicyProblem(type, methodTokens) : undefined);
}

/** ssl explicitly turned off in a parameter map (off, false, no, 0 and their prefixes). */
export function sslOff(parameters: Record<string, unknown> | undefined): boolean {
  const value = parameters?.ssl;
  return value === false || value === 0 || (typeof value === 'string' && /^(off|false|no|0|f|n)$/i.test(value.trim()));
}

/** ssl from a parameter map as PostgreSQL reads booleans (on, true, yes, 1 and their prefixes). */
export function sslOn(parameters: Record<string, unknown> | undefined): boolean {
  const value = parameters?.ssl;
  return value === true || value === 1 || (typeof value === 'string' && /^(on|true|yes|1|t|y)$/i.test(value.trim()));
}

/** One message per invalid line, naming its position (from 1) and its text. */
export function hbaProblems(lines: readonly string[], context?: HbaContext): string[] {
  return lines.flatMap((line, index) => {
    const problem = hbaLineProblem(line, context);
    return problem ? [`line ${index + 1} ${quoteLine(line)} ${problem}`] : [];
  });
}

/** The line as JSON text, cut at 120 characters, for messages. */
export function quoteLine(line: string): string {
  return JSON.stringify(line.length > 120 ? `${line.slice(0, 120)}…` : line);
}
