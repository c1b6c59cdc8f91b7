import * as k8s from '@kubernetes/client-node';
import { ContainerNames } from '../../../api/naming.js';

/**
 * Plays the kubelet for the harness's member processes: it reports the `postgres` container of
 * a member's pod as running when the harness starts the process and as terminated a little
 * later when the process exits (the real kubelet notices through its 1 s PLEG relist). The
 * report follows the process the harness started; it never looks at what ha-node does.
 */
export class PodStatusReporter {
  private readonly core: k8s.CoreV1Api;
  private readonly restarts = new Map<string, number>();

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly namespace: string,
    readonly delayMs: number,
  ) {
    this.core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  running(pod: string): Promise<void> {
    const restartCount = this.restarts.has(pod) ? this.restarts.get(pod)! + 1 : 0;
    this.restarts.set(pod, restartCount);
    return this.write(pod, 'Running', true, { running: { startedAt: new Date() } }, restartCount);
  }

  terminated(pod: string, exitCode: number): Promise<void> {
    const state: k8s.V1ContainerState = { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: new Date() } };
    return this.write(pod, 'Running', false, state, this.restarts.get(pod) ?? 0);
  }

  private async write(pod: string, phase: string, ready: boolean, state: k8s.V1ContainerState, restartCount: number): Promise<void> {
    const status: k8s.V1PodStatus = {
      phase,
      containerStatuses: [{ name: ContainerNames.postgres, image: 'keelson', imageID: '', ready, restartCount, state, started: ready }],
    };
    const options = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    await this.core.patchNamespacedPodStatus({ name: pod, namespace: this.namespace, body: { status } }, options).catch(() => undefined);
  }
}
