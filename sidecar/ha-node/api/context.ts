import type { Router } from 'express';
import type { Logger } from '../../../lib/log.js';
import type { Dcs } from '../dcs/types.js';
import type { HaLoop } from '../ha/loop.js';
import type { NodeSnapshot } from '../ha/snapshot.js';
import type { PostgresInstance } from '../postgres/instance.js';

/** What route modules may use. Mutating modules (issue 7) get the same context. */
export interface ApiContext {
  snapshot(): NodeSnapshot;
  dcs: Dcs;
  logger: Logger;
  /** Wakes the HA loop so it acts on a change now rather than after loop_wait. */
  wake(reason: string): void;
  loop?: HaLoop;
  pg?: PostgresInstance;
}

/** A group of routes; the app factory mounts modules in order, before the catch-all health route. */
export type ApiModule = (router: Router, context: ApiContext) => void;
