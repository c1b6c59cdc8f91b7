/**
 * Where a pod's wait to Ready goes (for bench/time-to-ready.ts): polls one pod every 100 ms and
 * notes when each phase was first seen — pod created, container started (pod status), ha-node
 * answering /liveness, ha-node's own /readiness answering 200, the startup probe passed (container
 * `started`), and the pod's Ready condition. The operator's Healthy is noted by the caller.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { HaNodePaths } from '../lib/ports.js';
import { watchHaNode } from './ha-node-watch.js';

export type Phase = 'created' | 'containerStarted' | 'haNodeListening' | 'haNodeReady' | 'startupPassed' | 'podReady';
export const phaseOrder: Phase[] = ['created', 'containerStarted', 'haNodeListening', 'startupPassed', 'haNodeReady', 'podReady'];

async function answers(ip: string, path: string): Promise<number | undefined> {
  return (await watchHaNode(ip, path))?.status;
}

/** Tracks one pod's phases until stopped; times are epoch milliseconds. */
export function trackPhases(readPod: () => Promise<V1Pod | undefined>) {
  const seen = new Map<Phase, number>();
  const note = (phase: Phase, at = Date.now()) => {
    if (!seen.has(phase)) seen.set(phase, at);
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const pod = await readPod().catch(() => undefined);
      if (pod?.metadata?.creationTimestamp) note('created', new Date(pod.metadata.creationTimestamp).getTime());
      const container = pod?.status?.containerStatuses?.find((c) => c.name === 'postgres');
      if (container?.state?.running?.startedAt) note('containerStarted', new Date(container.state.running.startedAt).getTime());
      if (container?.started) note('startupPassed');
      if (pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) note('podReady');
      const ip = pod?.status?.podIP;
      if (ip && container?.state?.running) {
        if (!seen.has('haNodeListening') && (await answers(ip, HaNodePaths.liveness)) !== undefined) note('haNodeListening');
        if (!seen.has('haNodeReady') && (await answers(ip, HaNodePaths.readiness)) === 200) note('haNodeReady');
      }
      if (seen.size === phaseOrder.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop(): Promise<Map<Phase, number>> {
      stopped = true;
      await loop;
      return seen;
    },
  };
}

/** "created +0.0, containerStarted +1.2, …" relative to the first phase seen. */
export function describePhases(seen: Map<Phase, number>, extra: Record<string, number> = {}): string {
  const all = [...phaseOrder.filter((p) => seen.has(p)).map((p) => [p, seen.get(p)!] as const), ...Object.entries(extra)];
  const start = Math.min(...all.map(([, at]) => at));
  return all.map(([phase, at]) => `${phase} +${((at - start) / 1000).toFixed(1)}`).join(', ');
}
