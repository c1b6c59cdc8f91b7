import { readFileSync } from 'node:fs';
import { callUrl, type CallAnswer, type CallOptions, type CallTls } from '../../../lib/http-call.js';

/**
 * How a member calls another member's REST API (the race, the eligibility check, failsafe): an
 * https api_url is verified against the cluster's server CA by the name the member's certificate
 * carries (`<member>.<hostSuffix>`, under the headless Service) while its address is dialled, as
 * replication does (postgres/peer-tls.ts). The CA file is read for each call, so a CA rotation
 * needs no restart. Without these settings (a member started by hand) the system store and the
 * URL's host decide, as fetch would.
 */
export interface PeerApiTls {
  /** The server CA bundle (the server Secret's ca.crt). */
  caFile?: string;
  /** `<member>.<hostSuffix>` is the name on a member's certificate (hostSuffix = `<cluster>-headless.<namespace>.svc`). */
  hostSuffix?: string;
  /** This member's certificate, presented to peers that verify clients (verify_client). */
  clientCertificate?: () => { cert: string; key: string } | undefined;
}

function tlsFor(member: { name: string }, tls: PeerApiTls | undefined): CallTls {
  if (!tls) return {};
  const ca = tls.caFile ? readFileSync(tls.caFile, 'utf8') : undefined;
  const client = tls.clientCertificate?.();
  return {
    ...(ca ? { ca } : {}),
    ...(tls.hostSuffix ? { servername: `${member.name}.${tls.hostSuffix}` } : {}),
    ...(client ? { cert: client.cert, key: client.key } : {}),
  };
}

/** One call to `url` on `member`'s API. */
export function callPeer(member: { name: string }, url: string, options: Omit<CallOptions, 'tls'>, tls?: PeerApiTls): Promise<CallAnswer> {
  return callUrl(url, { ...options, tls: tlsFor(member, tls) });
}
