/**
 * What a user's pg_hba line may not do once the cluster requires TLS (the default: the operator
 * always issues certificates). ha-node writes its own rules first, then `hostnossl … reject` for
 * every remote address, then the user's lines (sidecar/ha-node/postgres/hba.ts), as CloudNativePG
 * puts its fixed rules before the user's: a `host` line therefore only ever matches a TLS session.
 * Refused are the lines that say otherwise or that let a remote client in without proving who it is:
 * - `hostnossl` with any method but `reject`: it would admit a client without TLS (it can never
 *   match after the rejects, so it can only mislead);
 * - `hostgssenc` with any method but `reject`: GSSAPI encryption is not TLS, refused the same way;
 * - `trust` for a remote connection: anyone reaching the port would be in, TLS or not.
 */

/** Why a rule of connection type `type` with these method tokens weakens the TLS rules, or undefined. */
export function hbaTlsPolicyProblem(type: string, methodTokens: readonly string[]): string | undefined {
  const [method] = methodTokens;
  if (type === 'local' || method === undefined || method === 'reject') return undefined;
  if (type === 'hostnossl') return 'would let a remote client in without TLS; the cluster requires TLS for every remote connection (use host or hostssl)';
  if (type === 'hostgssenc')
    return 'would let a remote client in without TLS (GSSAPI encryption is not TLS); the cluster requires TLS for every remote connection';
  if (method === 'trust') return 'trusts a remote address without authentication; use scram-sha-256 or cert for remote clients';
  return undefined;
}
