/** The test-only HTTP hook `/_keelson/faults/*` (served only with fault injection enabled). */
import type { ServerResponse } from 'node:http';
import { methodNotSupported, pathNotFound } from './errors.js';
import type { Faults } from './faults.js';
import { parseBody, sendJson } from './http-io.js';
import { isJsonObject } from './types.js';

export function faultAdmin(faults: Faults, method: string, action: string | undefined, raw: Buffer, res: ServerResponse): void {
  const control = faults.control();
  const body = parseBody(raw, 'application/json');
  const args = isJsonObject(body) ? body : {};
  if (method !== 'POST') throw methodNotSupported('faults', '', method);
  switch (action) {
    case 'pause':
      control.pause(args.mode === 'unavailable' ? 'unavailable' : 'hang');
      return sendJson(res, 200, { paused: true });
    case 'resume':
      control.resume();
      return sendJson(res, 200, { paused: false });
    case 'drop-watches':
      return sendJson(res, 200, { dropped: control.dropWatches({ identity: typeof args.identity === 'string' ? args.identity : undefined, mode: args.mode === 'reset' ? 'reset' : 'close' }) });
    case 'refuse':
      control.refuse(args as never);
      return sendJson(res, 200, { refused: args });
    case 'compact':
      control.compactHistory();
      return sendJson(res, 200, { compacted: true });
    default:
      throw pathNotFound();
  }
}
