import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '../../lib/log.js';

/** A debug logger whose JSON lines a test reads back (parsed, in order). */
export function capturedLogger(name = 'test'): { logger: Logger; lines: Record<string, unknown>[] } {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { logger: createLogger({ name, level: 'debug', destination: stream }), lines };
}
