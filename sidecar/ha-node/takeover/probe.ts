import { connect } from 'node:net';
import type { Signal } from './evidence.js';

/**
 * One TCP connect: `dead` only for an active refusal (RST: nothing listens on the port), `alive`
 * when the handshake completes (a frozen process still completes it from the kernel backlog),
 * `unknown` for a timeout or any other error (an unreachable host proves nothing).
 */
export function probePort(host: string, port: number, timeoutMs: number): Promise<Signal> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (signal: Signal): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(signal);
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    socket.once('connect', () => done('alive'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'dead' : 'unknown'));
  });
}
