import { connect } from 'node:net';

/**
 * One HTTP/1.1 request written byte for byte over a fresh loopback TCP connection, so odd methods,
 * malformed headers and wrong Content-Length values reach the server as sent (fetch and
 * http.request refuse to send most of them).
 */
export interface RawRequest {
  method: string;
  /** Request target as written on the request line: path and query. */
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** Content-Length to declare; 'omit' leaves the header out; default: the body's length. */
  contentLength?: number | 'omit';
}

export interface RawAnswer {
  /** HTTP status, or how the exchange ended without one. */
  status: number | 'closed' | 'timeout';
  headers: Record<string, string>;
  /** The body as text (at most maxBodyBytes kept). */
  body: string;
}

const maxBodyBytes = 1024 * 1024;

export function renderRequest(host: string, request: RawRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const length = request.contentLength ?? request.body.length;
  if (length !== 'omit') lines.push(`Content-Length: ${length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), request.body]);
}

/** Status, headers and whether the body is complete, from the bytes received so far. */
function parseAnswer(received: Buffer, method: string): { answer: RawAnswer; complete: boolean } | undefined {
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = received.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(head[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = received.subarray(end + 4);
  const answer: RawAnswer = { status: Number.isFinite(status) ? status : 'closed', headers, body: body.subarray(0, maxBodyBytes).toString('utf8') };
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) return { answer, complete: true };
  if (headers['content-length'] !== undefined) return { answer, complete: body.length >= Number(headers['content-length']) };
  if (/chunked/i.test(headers['transfer-encoding'] ?? ''))
    return { answer, complete: body.includes('\r\n0\r\n\r\n') || body.subarray(0, 5).toString() === '0\r\n\r\n' };
  return { answer, complete: false };
}

/** Sends request to host:port and resolves with the answer (never rejects). */
export function sendRaw(host: string, port: number, request: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (timedOut = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseAnswer(received, request.method);
      resolve(parsed ? parsed.answer : { status: timedOut ? 'timeout' : 'closed', headers: {}, body: received.toString('latin1').slice(0, 200) });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      if (received.length < maxBodyBytes + 64 * 1024) received = Buffer.concat([received, chunk]);
      const parsed = parseAnswer(received, request.method);
      if (parsed?.complete) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server may answer (413, 400) and close before the whole body is written: EPIPE/ECONNRESET.
    socket.on('error', () => finish());
    socket.on('connect', () => socket.write(renderRequest(`${host}:${port}`, request)));
  });
}
