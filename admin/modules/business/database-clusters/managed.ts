import type { DatabaseClusterObject } from './kube.js';

/**
 * A cluster's declared roles (spec.roles with status.roles) and its Database objects (spec with
 * status), as the admin page lists them. Passwords are never here: only the Secret's name.
 */

type Json = Record<string, unknown>;

export interface RoleListing {
  name: string;
  ensure: string;
  attributes: string[];
  connectionLimit: number;
  validUntil: string | null;
  inRoles: string[];
  passwordSecret: string | null;
  applied: boolean | null;
  message: string | null;
}

export interface DatabaseListing {
  object: string;
  name: string;
  owner: string;
  ensure: string;
  reclaimPolicy: string;
  extensions: string[];
  schemas: string[];
  applied: boolean | null;
  message: string | null;
}

const flags = ['login', 'superuser', 'createdb', 'createrole', 'replication', 'bypassrls'] as const;

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter((v): v is Json => typeof v === 'object' && v !== null) : []);

export function toRoleListing(cluster: DatabaseClusterObject): RoleListing[] {
  const status = new Map(list(cluster.status?.roles).map((r) => [text(r.name), r]));
  return list(cluster.spec?.roles).map((role) => {
    const name = text(role.name);
    const observed = status.get(name);
    return {
      name,
      ensure: text(role.ensure, 'present'),
      attributes: [...flags.filter((f) => role[f] === true), ...(role.inherit === false ? ['noinherit'] : [])],
      connectionLimit: typeof role.connectionLimit === 'number' ? role.connectionLimit : -1,
      validUntil: typeof role.validUntil === 'string' ? role.validUntil : null,
      inRoles: Array.isArray(role.inRoles) ? role.inRoles.filter((r): r is string => typeof r === 'string') : [],
      passwordSecret: typeof (role.passwordSecret as Json | undefined)?.name === 'string' ? ((role.passwordSecret as Json).name as string) : null,
      applied: typeof observed?.applied === 'boolean' ? observed.applied : null,
      message: typeof observed?.message === 'string' ? observed.message : null,
    };
  });
}

export function toDatabaseListing(objects: DatabaseClusterObject[], cluster: string): DatabaseListing[] {
  return objects
    .filter((o) => o.spec?.cluster === cluster)
    .map((o) => ({
      object: o.metadata.name,
      name: text(o.spec?.name),
      owner: text(o.spec?.owner),
      ensure: text(o.spec?.ensure, 'present'),
      reclaimPolicy: text(o.spec?.reclaimPolicy, 'retain'),
      extensions: list(o.spec?.extensions).map((e) => text(e.name)),
      schemas: list(o.spec?.schemas).map((s) => text(s.name)),
      applied: typeof o.status?.applied === 'boolean' ? o.status.applied : null,
      message: typeof o.status?.message === 'string' ? o.status.message : null,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
