/** Reading requests and writing JSON/text answers; who the client is. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest } from './errors.js';
import type { ClientIdentity } from './faults.js';
import { decodeProtobuf } from './protobuf.js';

const maxBodyBytes = 3 * 1024 * 1024;

export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  if (contentType.includes('protobuf')) return decodeProtobuf(raw);
  if (contentType.includes('cbor')) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`);
  const text = raw.toString('utf8');
  if (contentType.includes('yaml')) {
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`error decoding from json: ${(err as Error).message}`);
  }
}

export function identityOf(req: IncomingMessage): ClientIdentity {
  const auth = req.headers.authorization;
  const token = auth && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : undefined;
  let commonName: string | undefined;
  const socket = req.socket as TLSSocket;
  // Only a certificate signed by the stand-in's CA names its client (the TLS layer asks for one but lets anyone in).
  if (typeof socket.getPeerCertificate === 'function' && socket.authorized) {
    const cert = socket.getPeerCertificate();
    if (cert && cert.subject && typeof cert.subject.CN === 'string') commonName = cert.subject.CN;
  }
  return { token, commonName, userAgent: req.headers['user-agent'] };
}
