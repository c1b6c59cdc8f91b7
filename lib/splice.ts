import type { Socket } from 'node:net';

/** Pipes two sockets into each other; when either closes or fails, both are destroyed. */
export function splice(a: Socket, b: Socket): void {
  a.pipe(b).pipe(a);
  const close = (): void => {
    a.destroy();
    b.destroy();
  };
  a.once('error', close).once('close', close);
  b.once('error', close).once('close', close);
}
