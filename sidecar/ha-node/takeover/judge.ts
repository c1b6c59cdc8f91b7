import type { MemberRecord } from '../dcs/types.js';
import { apiEndpoint, kubeletSignal, type CrashEvidence } from './evidence.js';
import type { V1Pod } from '@kubernetes/client-node';
import { probePort } from './probe.js';

export interface PodSource {
  pod(name: string): V1Pod | undefined;
}

/**
 * Gathers the crash evidence about the leader member. The network probes run only when the
 * kubelet already reports the container dead, so a healthy cluster costs nothing.
 */
export class LeaderCrashJudge {
  constructor(
    private readonly pods: PodSource,
    private readonly container: string,
    private readonly probeTimeoutMs = 1000,
  ) {}

  kubeletSaysDead(member: MemberRecord): boolean {
    return kubeletSignal(this.pods.pod(member.name), this.container) === 'dead';
  }

  async evidence(member: MemberRecord): Promise<CrashEvidence> {
    const kubelet = kubeletSignal(this.pods.pod(member.name), this.container);
    if (kubelet !== 'dead') return { kubelet, postgres: 'unknown', api: 'unknown' };
    const api = apiEndpoint(member.api_url);
    const [postgres, apiSignal] = await Promise.all([
      // A record without an address proves nothing (an empty host would probe this machine).
      member.host && member.port > 0 ? probePort(member.host, member.port, this.probeTimeoutMs) : Promise.resolve('unknown' as const),
      api ? probePort(api.host, api.port, this.probeTimeoutMs) : Promise.resolve('unknown' as const),
    ]);
    return { kubelet, postgres, api: apiSignal };
  }
}
