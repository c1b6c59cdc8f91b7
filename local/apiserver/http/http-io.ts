/** Reading requests and writing JSON/text answers; who the client is. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest } from '../errors.js';
import type { ClientIdentity } from '../faults/faults.js';
import { decodeProtobuf } from './protobuf.js';

const maxBodyBytes = 3 * 1024 * 1024;

/**
 * How deep a body may nest. Go's decoders stop at 10,000 levels; the stand-in's recursive
 * object code (clone, merge, schema walks) is only safe well below that, and no Kubernetes
 * object comes near 100 levels, so deeper bodies are refused with a 400 before any of it runs.
 */
export const maxNestingDepth = 1000;

/** The nesting depth of parsed JSON, walked with an explicit stack (no recursion). */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > maxNestingDepth) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function boundedDepth(value: unknown): unknown {
  if (nestingDepth(value) > maxNestingDepth) throw badRequest(`the request body nests deeper than ${maxNestingDepth} levels: exceeded max depth`);
  return value;
}

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
  if (contentType.includes('cbor'))
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  const text = raw.toString('utf8');
  if (contentType.includes('yaml')) {
    // JSON is YAML too, and clients send apply bodies as JSON: the JSON parser takes deeper nesting.
    if (/^\s*[[{]/.test(text)) {
      try {
        return boundedDepth(JSON.parse(text));
      } catch (err) {
        if (err instanceof ApiError) throw err;
      }
    }
    try {
      return boundedDepth(parseYaml(text, { maxAliasCount: 100 }));
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  try {
    return boundedDepth(JSON.parse(text));
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
