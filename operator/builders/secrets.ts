import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { Annotations, RoleNames, SecretKeys } from '../../api/naming.js';
import { clusterNames, ownedMeta, poolerPartLabel, type BuildContext } from './context.js';

/** superuser/replication/app/pooler are PostgreSQL roles; api guards ha-node's and the pooler's mutating endpoints. */
export type CredentialKind = 'superuser' | 'replication' | 'app' | 'api' | 'pooler';

/** 32 random bytes as URL-safe text: no quoting trouble in connection strings or pgpass. */
export function generatePassword(): string {
  return randomBytes(32).toString('base64url');
}

export function credentialUsername(ctx: BuildContext, which: CredentialKind): string {
  if (which === 'superuser') return RoleNames.superuser;
  if (which === 'replication') return RoleNames.replication;
  if (which === 'api') return 'keelson';
  if (which === 'pooler') return RoleNames.pooler;
  return ctx.cluster.spec.bootstrap.owner;
}

export function credentialSecretName(ctx: BuildContext, which: CredentialKind): string {
  const n = clusterNames(ctx);
  return { superuser: n.superuserSecret, replication: n.replicationSecret, app: n.appSecret, api: n.apiSecret, pooler: n.poolerSecret }[which];
}

/**
 * A basic-auth Secret with a password. The builder stays pure: the caller passes the password,
 * generated once when the Secret does not exist; the reconciler never replaces existing data.
 */
export function buildCredentialSecret(ctx: BuildContext, which: CredentialKind, password: string, username = credentialUsername(ctx, which)): V1Secret {
  const metadata = ownedMeta(ctx, credentialSecretName(ctx, which), `secret-${which}`, which === 'pooler' ? poolerPartLabel() : {});
  metadata.annotations = { [Annotations.generatedSecret]: 'true' };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata,
    type: 'kubernetes.io/basic-auth',
    // data (not stringData) so what we send is what the API server stores and returns.
    data: { [SecretKeys.username]: toBase64(username), [SecretKeys.password]: toBase64(password) },
  };
}

function toBase64(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64');
}

export const credentialKinds: readonly CredentialKind[] = ['superuser', 'replication', 'app', 'api'];

/** The Secrets a cluster needs: the pooler role's only while the pooler is enabled. */
export function credentialKindsOf(ctx: BuildContext): CredentialKind[] {
  return ctx.cluster.spec.pooler.enabled ? [...credentialKinds, 'pooler'] : [...credentialKinds];
}
