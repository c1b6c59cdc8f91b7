/**
 * The two servers every contract case runs against: the TypeScript stand-in (always) and the real
 * kube-apiserver 1.20.2 oracle (when its binaries are built; in CI their absence is a failure).
 */
import type * as k8s from '@kubernetes/client-node';
import { startTestApiServer } from '../support/kube.js';
import { oracleMissing, startOracleApiServer } from '../support/oracle.js';

export interface ContractServer {
  url: string;
  token: string;
  caCert?: string;
  kubeconfigPath: string;
  kubeConfig: k8s.KubeConfig;
  close(): Promise<void>;
  /**
   * Makes every earlier resourceVersion too old to watch from. The stand-in keeps its first 1000
   * events (so a fresh one can replay from "1"); the real watch cache starts at its first list,
   * so there nothing needs doing.
   */
  forgetWatchHistory?(): void;
}

export interface ContractTarget {
  name: string;
  /** True for the real kube-apiserver (1.20: no CEL, no policy/v1, no strict field validation). */
  real: boolean;
  start(): Promise<ContractServer>;
}

export const standIn: ContractTarget = {
  name: 'stand-in',
  real: false,
  async start() {
    const server = await startTestApiServer();
    return Object.assign(server, { forgetWatchHistory: () => server.faults.compactHistory() });
  },
};
export const oracle: ContractTarget = { name: 'kube-apiserver 1.20.2 oracle', real: true, start: () => startOracleApiServer() };

/** The targets to run here, and why the oracle is absent (if it is). */
export function contractTargets(): { targets: ContractTarget[]; oracleAbsent?: string } {
  const missing = oracleMissing();
  return missing ? { targets: [standIn], oracleAbsent: missing } : { targets: [standIn, oracle] };
}
