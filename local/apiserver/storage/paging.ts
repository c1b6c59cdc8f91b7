/** List paging: continue tokens carry the list's resourceVersion and the last key returned. */
import { badRequest } from '../errors.js';
import type { KubeObject } from '../types.js';

export function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : String(o.metadata.name);
}

export function encodeContinue(token: { rv: number; start: string }): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

export function decodeContinue(text: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof parsed.rv === 'number' && typeof parsed.start === 'string') return { rv: parsed.rv, start: parsed.start };
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: invalid continue token');
}
