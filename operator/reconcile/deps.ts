import type { Logger } from '../../lib/log.js';
import type { EventRecorder } from '../events.js';
import type { HaNodeClient } from '../hanode-client.js';
import type { OperatorKubeApi } from '../kube-api.js';
import type { WriteRecorder } from './apply.js';

/** What a reconcile pass works with; every module of the pass takes it (types only, imported from anywhere here). */
export interface ReconcileDeps {
  api: OperatorKubeApi;
  haNode: HaNodeClient;
  events: EventRecorder;
  recordWrite: WriteRecorder;
  logger: Logger;
  operatorVersion: string;
  now?: () => Date;
  /** How long a new CA is only trusted before it signs (operator/reconcile/backup-ca-rotation.ts). */
  caTrustPropagationMs?: number;
}

export interface ReconcileResult {
  /** Reconcile again after this delay (something is still converging). */
  requeueAfterMs?: number;
  /** The delay is a floor that doubles while the cluster stays unconverged (the work queue's back-off). */
  converging?: boolean;
  /** This pass took a step: the converging back-off starts over (waits double only while nothing moves). */
  progressed?: boolean;
}
