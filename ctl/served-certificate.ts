import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import { checkDirect, openTunnel, type MemberRoute } from './member-route.js';

/**
 * The certificate a PostgreSQL server (or PgBouncer) presents to a new client, as
 * `openssl s_client -starttls postgres` shows it: an SSLRequest, then a TLS handshake, nothing
 * more (no login). Dialled directly or through the route's member proxy. The chain is not
 * verified here: the caller compares the certificate itself with the one in the cluster's Secret,
 * a stronger check than trusting its CA.
 */

/** The SSLRequest message: length 8, code 80877103. */
const sslRequest = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

function withTimeout<T>(promise: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`${what}: no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function dial(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port }, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function firstByte(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      cleanup();
      resolve(chunk[0]!);
    };
    const onEnd = () => {
      cleanup();
      reject(new Error('closed before answering the SSLRequest'));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('error', onEnd);
      socket.off('end', onEnd);
    };
    socket.once('data', onData);
    socket.once('error', onEnd);
    socket.once('end', onEnd);
  });
}

async function handshake(socket: Socket, where: string): Promise<X509Certificate> {
  socket.write(sslRequest);
  const answer = await firstByte(socket);
  if (answer !== 0x53) throw new Error(`${where} does not offer TLS (answered ${JSON.stringify(String.fromCharCode(answer))} to the SSLRequest)`);
  socket.pause();
  const secure = tlsConnect({ socket, rejectUnauthorized: false });
  try {
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    const cert = secure.getPeerX509Certificate();
    if (!cert) throw new Error(`${where} presented no certificate`);
    return cert;
  } finally {
    secure.destroy();
  }
}

/** The certificate host:port serves to a new TLS client. */
export async function servedCertificate(route: MemberRoute | undefined, host: string, port: number, timeoutMs: number): Promise<X509Certificate> {
  const where = `${host}:${port}`;
  let socket: Socket | undefined;
  const work = async () => {
    if (route?.proxy) socket = await openTunnel(route.proxy, host, port, timeoutMs);
    else {
      checkDirect(route, host);
      socket = await dial(host, port);
    }
    return handshake(socket, where);
  };
  try {
    return await withTimeout(work(), timeoutMs, where, () => socket?.destroy());
  } finally {
    socket?.destroy();
  }
}
