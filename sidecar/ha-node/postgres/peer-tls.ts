/**
 * How a member reaches another member of its cluster over TLS: libpq's verify-full against the
 * cluster's server CA, by the peer's name under the headless Service (`host`) while connecting to
 * its address (`hostaddr`: no DNS lookup, the certificate is still checked against the name),
 * presenting the replication client certificate. A standby cluster's remote source has another CA:
 * when the dynamic configuration names the name its certificate carries (standby_cluster.server_name,
 * a DatabaseCluster source) and the copy of the source's replication Secret is mounted, it is reached
 * the same way with the source's CA and the source's replication certificate (the source takes
 * replication by certificate alone); otherwise as before, by password (an external server).
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
  /** A standby cluster's source: its CA and the replication client certificate it signed. */
  source?: { rootCert: string; cert: string; key: string };
}

/** The part of a standby source this needs (standby-source.ts). */
interface SourceName {
  server_name?: string;
}

/** TLS for a connection to `peer`, or undefined (no TLS configured, or a remote source). */
export function peerConnectionTls(settings: PeerTlsSettings | undefined, peer: { name: string; source?: SourceName }): ConnectionTls | undefined {
  if (peer.source) return sourceConnectionTls(settings, peer.source);
  if (!settings) return undefined;
  return {
    serverName: `${peer.name}.${settings.hostSuffix}`,
    rootCert: settings.rootCert,
    ...(settings.cert && settings.key ? { cert: settings.cert, key: settings.key } : {}),
  };
}

function sourceConnectionTls(settings: PeerTlsSettings | undefined, source: SourceName): ConnectionTls | undefined {
  const files = settings?.source;
  // Not checked for existence: the copy may reach the pod after the conninfo is written (a swap makes a
  // primary cluster a standby), and the walreceiver's retries then find it without a new conninfo.
  if (!files || source.server_name === undefined) return undefined;
  return { serverName: source.server_name, rootCert: files.rootCert, cert: files.cert, key: files.key };
}

/**
 * The same check for ha-node's own node-postgres sessions to a peer (as the superuser, so no
 * client certificate): the CA bundle read now, for the connection about to open (a CA rotation
 * needs no restart), the certificate checked against the peer's name while the address is dialled.
 */
export function peerClientSsl(settings: PeerTlsSettings | undefined, peer: { name: string; source?: SourceName }): ConnectionOptions | undefined {
  const tls = peerConnectionTls(settings, peer);
  return tls ? { rejectUnauthorized: true, servername: tls.serverName, ca: readFileSync(tls.rootCert, 'utf8') } : undefined;
}
