import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { stalePrimaryLabels } from '../../../sidecar/ha-node/pod-labeler.js';

const pod = (name: string, role: string | undefined, deleting = false): V1Pod => ({
  metadata: { name, resourceVersion: `rv-${name}`, labels: role ? { 'keelson.io/role': role } : {}, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
});

test('the leader relabels every other pod labelled primary, with the resourceVersion it saw', () => {
  const pods = [pod('db-0', 'primary'), pod('db-1', 'primary'), pod('db-2', 'replica'), pod('db-3', undefined), pod('db-4', 'primary', true)];
  assert.deepEqual(stalePrimaryLabels(pods, 'db-1'), [{ name: 'db-0', resourceVersion: 'rv-db-0' }]);
  assert.deepEqual(stalePrimaryLabels([pod('db-1', 'primary')], 'db-1'), []);
});
