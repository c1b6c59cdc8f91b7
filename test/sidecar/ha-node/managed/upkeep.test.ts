import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../lib/log.js';
import type { ClusterView } from '../../../../sidecar/ha-node/dcs/types.js';
import { keepManagedObjects } from '../../../../sidecar/ha-node/ha/duties/managed-upkeep.js';
import type { LoopContext } from '../../../../sidecar/ha-node/ha/loop-context.js';
import type { ManagedKeeper } from '../../../../sidecar/ha-node/managed/keeper.js';
import type { ServerStatus } from '../../../../sidecar/ha-node/postgres/status.js';

/**
 * The loop duty's rule: roles and databases are applied on a writable primary only, so a standby
 * leader (or a cluster still restoring) applies nothing until it is promoted; the roles it hands
 * over are the dynamic configuration's, and a failing pass never stops the cycle.
 */
describe('keepManagedObjects', () => {
  const logger = createLogger({ name: 'upkeep-test', level: 'silent' });
  const calls: unknown[] = [];
  let fail = false;
  const keeper = {
    keepInBackground: (_connect: unknown, roles: unknown, identity: string, onError: (error: Error) => void) => {
      calls.push([roles, identity]);
      if (fail) onError(new Error('connection refused'));
    },
  } as unknown as ManagedKeeper;
  const ctx = { options: { managed: keeper, logger }, pg: { connect: () => Promise.reject(new Error('unused')) } } as unknown as LoopContext;
  const cluster = { config: { roles: [{ name: 'reader' }] } } as unknown as ClusterView;
  const status = (inRecovery: boolean) => ({ inRecovery, systemIdentifier: '7', timeline: 2, postmasterStartTime: 't' }) as ServerStatus;

  it('does nothing on a server in recovery (standby leader, restore)', () => {
    keepManagedObjects(ctx, cluster, status(true));
    assert.deepEqual(calls, []);
  });

  it('applies the dynamic configuration’s roles on a writable primary, and a failure does not throw', () => {
    keepManagedObjects(ctx, cluster, status(false));
    assert.deepEqual(calls, [[[{ name: 'reader' }], '7/2/t']]);
    fail = true;
    keepManagedObjects(ctx, cluster, status(false));
    assert.equal(calls.length, 2);
  });
});
