/**
 * The faults of the soak, each applied to the current primary and undone the way a kubelet or an
 * operator would (a killed container is started again, a stopped process continued, a cut lifted).
 */
import type { Member, TestCluster } from '../test/sidecar/ha-node/harness.js';

export interface FaultContext {
  cluster: TestCluster;
  primary: Member;
  /** ttl in seconds: stops and cuts are held past it. */
  ttl: number;
  authorization: string;
  /** Set by the health-checked fault: ms /primary still answered 200 after the postmaster died. */
  healthLagMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** A kubelet restarts a dead container after its back-off (10 s at first; 3 s keeps rounds short). */
const restartDelayMs = 3000;

export const faults: Record<string, (ctx: FaultContext) => Promise<void>> = {
  'kill -9 ha-node': async ({ primary }) => {
    primary.killHaNode('SIGKILL');
    await sleep(restartDelayMs);
    primary.start();
  },
  'kill -9 postmaster': async ({ primary }) => {
    signal(primary.postmasterPid(), 'SIGKILL');
  },
  'kill -9 pod': async ({ primary }) => {
    primary.killPod();
    await sleep(restartDelayMs);
    primary.start();
  },
  'SIGSTOP ha-node': async ({ primary, ttl }) => {
    const pid = primary.process?.pid;
    signal(pid, 'SIGSTOP');
    await sleep((ttl + 4) * 1000);
    signal(pid, 'SIGCONT');
  },
  'SIGSTOP postmaster': async ({ primary, ttl }) => {
    const pid = primary.postmasterPid();
    signal(pid, 'SIGSTOP');
    await sleep((ttl + 4) * 1000);
    signal(pid, 'SIGCONT');
  },
  /** With a client asking /primary every 50 ms: how long it still said 200 after the postmaster died. */
  'kill -9 postmaster under health checks': async (ctx) => {
    const { primary } = ctx;
    const pid = primary.postmasterPid();
    signal(pid, 'SIGKILL');
    const killedAt = Date.now();
    const deadline = killedAt + 30_000;
    while (Date.now() < deadline) {
      const code = await fetch(`${primary.apiUrl}/primary`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.status,
        () => 0,
      );
      if (code !== 200) break;
      await sleep(50);
    }
    ctx.healthLagMs = Date.now() - killedAt;
  },
  'API cut of the primary': async ({ cluster, primary, ttl }) => {
    const lift = cluster.api.faults.refuse({ pod: `default/${primary.name}`, response: 'hang' });
    await sleep((ttl + 6) * 1000);
    lift();
  },
  switchover: async ({ cluster, primary, authorization }) => {
    const candidate = cluster.members.find((m) => m !== primary)!;
    const response = await fetch(`${primary.apiUrl}/switchover`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: authorization },
      body: JSON.stringify({ leader: primary.name, candidate: candidate.name }),
      signal: AbortSignal.timeout(60_000),
    });
    await response.arrayBuffer();
  },
};
