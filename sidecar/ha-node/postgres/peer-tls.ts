/**
 * How a member reaches another member of its cluster over TLS: libpq's verify-full against the
 * cluster's server CA, by the peer's name under the headless Service (`host`) while connecting to
 * its address (`hostaddr`: no DNS lookup, the certificate is still checked against the name),
 * presenting the replication client certificate. A standby cluster's remote source has another CA
 * and is reached as before.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { ConnectionTls } from './conf.js';

export interface PeerTlsSettings {
  /** The server CA bundle the peer's certificate must chain to. */
  rootCert: string;
  /** The client certificate and key presented (the replication role's). */
  cert?: string;
  key?: string;
  /** Appended to a member name to make the name its certificate carries (`<cluster>-headless.<ns>.svc`). */
  hostSuffix: string;
}

/** TLS for a connection to `peer`, or undefined (no TLS configured, or a remote source). */
export function peerConnectionTls(settings: PeerTlsSettings | undefined, peer: { name: string; source?: unknown }): ConnectionTls | undefined {
  if (!settings || peer.source) return undefined;
  return {
    serverName: `${peer.name}.${settings.hostSuffix}`,
    rootCert: settings.rootCert,
    ...(settings.cert && settings.key ? { cert: settings.cert, key: settings.key } : {}),
  };
}

/**
 * The same check for ha-node's own node-postgres sessions to a peer (as the superuser, so no
 * client certificate): the CA bundle read now, for the connection about to open (a CA rotation
 * needs no restart), the certificate checked against the peer's name while the address is dialled.
 */
export function peerClientSsl(settings: PeerTlsSettings | undefined, peer: { name: string; source?: unknown }): ConnectionOptions | undefined {
  const tls = peerConnectionTls(settings, peer);
  return tls ? { rejectUnauthorized: true, servername: tls.serverName, ca: readFileSync(tls.rootCert, 'utf8') } : undefined;
}
