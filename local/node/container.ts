/**
 * Lifecycle of one container: start the process, run startup/liveness/readiness probes, restart
 * per restartPolicy with back-off, stop with a grace period. The runner only keeps state and
 * reports changes through `onChange`; the pod worker turns it into pod status.
 */
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Probe } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import { RestartBackoff, shouldRestart, type BackoffPolicy } from './backoff.js';
import { ContainerProcess, type ExitInfo, type ProcessSpec } from './process.js';
import { ProbeState, nextProbeAt, probeTiming, type ProbeKind } from './probes.js';
import { runProbe, type ProbeTarget } from './probe-actions.js';
import { kubeTime, sleep } from './time.js';

export class LaunchError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

export interface ContainerRunnerOptions {
  container: V1Container;
  /** Init containers run to completion and never restart after exit code 0. */
  init: boolean;
  restartPolicy: string;
  backoff: BackoffPolicy;
  terminationGraceMs: number;
  /** Builds the process spec for each start (env and files are resolved again, as the kubelet does). */
  launch(instance: number): Promise<ProcessSpec & { probeTarget: ProbeTarget }>;
  onChange(): void;
  onEvent(type: 'Normal' | 'Warning', reason: string, message: string): void;
  logger: Logger;
}

type Phase = 'waiting' | 'running' | 'terminated';

export class ContainerRunner {
  private phase: Phase = 'waiting';
  private waiting: { reason: string; message?: string } = { reason: 'ContainerCreating' };
  private lastTerminated?: V1ContainerState['terminated'] & object;
  private previousTerminated?: V1ContainerState['terminated'] & object;
  private process?: ContainerProcess;
  private restarts = 0;
  private startedFlag = false;
  private readyFlag = false;
  private finishedFlag = false;
  private ranFlag = false;
  private readonly stopController = new AbortController();
  private runAbort?: AbortController;
  private loop?: Promise<void>;

  constructor(private readonly options: ContainerRunnerOptions) {}

  get name(): string {
    return this.options.container.name;
  }

  get ready(): boolean {
    return this.readyFlag;
  }

  get started(): boolean {
    return this.startedFlag;
  }

  /** Terminated for good: completed (init) or not restarted per policy. */
  get finished(): boolean {
    return this.finishedFlag;
  }

  /** The process was started at least once. */
  get everStarted(): boolean {
    return this.ranFlag;
  }

  get isRunning(): boolean {
    return this.phase === 'running';
  }

  get lastExitCode(): number | undefined {
    return this.lastTerminated?.exitCode;
  }

  get restartCount(): number {
    return this.restarts;
  }

  /** Starts the supervision loop; the promise settles when the container is finished or stopped. */
  start(): Promise<void> {
    this.loop ??= this.supervise();
    return this.loop;
  }

  async stop(graceMs: number): Promise<void> {
    this.stopController.abort();
    this.runAbort?.abort();
    const proc = this.process;
    if (proc?.running) {
      this.options.onEvent('Normal', 'Killing', `Stopping container ${this.name}`);
      await proc.stop(graceMs);
    }
    await this.loop;
  }

  /** Immediate SIGKILL of everything the container runs (node shutdown in tests). */
  kill(): void {
    this.stopController.abort();
    this.runAbort?.abort();
    this.process?.kill();
  }

  status(image: string): V1ContainerStatus {
    const state: V1ContainerState = {};
    if (this.phase === 'running' && this.process) state.running = { startedAt: kubeTime(this.process.startedAt) as unknown as Date };
    else if (this.phase === 'terminated' && this.lastTerminated) state.terminated = this.lastTerminated;
    else state.waiting = { ...this.waiting };
    const lastState: V1ContainerState = {};
    const previous = this.phase === 'terminated' ? this.previousTerminated : this.lastTerminated;
    if (previous) lastState.terminated = previous;
    return {
      name: this.name,
      image,
      imageID: `local://${image}`,
      containerID: this.process?.pid !== undefined ? `local://${this.process.pid}` : undefined,
      ready: this.readyFlag,
      started: this.startedFlag,
      restartCount: this.restarts,
      state,
      lastState,
    };
  }

  private async supervise(): Promise<void> {
    const backoff = new RestartBackoff(this.options.backoff);
    const policy = this.options.init && this.options.restartPolicy === 'Always' ? 'OnFailure' : this.options.restartPolicy;
    for (let instance = 0; !this.stopController.signal.aborted; instance += 1) {
      let exit: ExitInfo;
      let ranForMs: number;
      try {
        const spec = await this.options.launch(instance);
        if (this.stopController.signal.aborted) break;
        // Retries after configuration errors are not restarts: only a container that ran before counts.
        if (this.ranFlag) this.restarts += 1;
        const proc = new ContainerProcess(spec);
        this.process = proc;
        this.ranFlag = true;
        this.phase = 'running';
        this.startedFlag = false;
        this.readyFlag = false;
        this.options.onChange();
        this.options.onEvent('Normal', 'Started', `Started container ${this.name}`);
        this.runAbort = new AbortController();
        void this.runProbes(proc, spec.probeTarget, this.runAbort.signal);
        exit = await proc.exited;
        this.runAbort.abort();
        ranForMs = exit.finishedAt.getTime() - proc.startedAt.getTime();
        this.previousTerminated = this.lastTerminated;
        this.lastTerminated = {
          exitCode: exit.exitCode,
          signal: exit.signal ? signalNumber(exit.signal) : undefined,
          reason: exit.startError ? 'StartError' : exit.exitCode === 0 ? 'Completed' : 'Error',
          message: exit.startError,
          startedAt: kubeTime(proc.startedAt) as unknown as Date,
          finishedAt: kubeTime(exit.finishedAt) as unknown as Date,
          containerID: proc.pid !== undefined ? `local://${proc.pid}` : undefined,
        };
        this.phase = 'terminated';
        this.readyFlag = false;
        this.options.logger.info({ container: this.name, exitCode: exit.exitCode, signal: exit.signal, startError: exit.startError }, 'container exited');
      } catch (err) {
        // Configuration errors keep the container waiting and are retried with back-off.
        const reason = err instanceof LaunchError ? err.reason : 'CreateContainerConfigError';
        const message = err instanceof Error ? err.message : String(err);
        this.phase = 'waiting';
        this.waiting = { reason, message };
        this.options.onEvent('Warning', 'Failed', `Error: ${message}`);
        this.options.onChange();
        if (!(await sleep(Math.max(1000, backoff.onExit(0)), this.stopController.signal))) break;
        continue;
      }
      if (this.stopController.signal.aborted) break;
      if (!shouldRestart(policy, exit.exitCode) || (this.options.init && exit.exitCode === 0)) {
        this.finishedFlag = true;
        this.options.onChange();
        return;
      }
      const delayMs = backoff.onExit(ranForMs);
      if (delayMs > 0) {
        this.phase = 'waiting';
        this.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(delayMs / 1000)}s restarting failed container=${this.name}` };
        this.options.onEvent('Warning', 'BackOff', 'Back-off restarting failed container');
      }
      this.options.onChange();
      if (!(await sleep(delayMs, this.stopController.signal))) break;
    }
    this.finishedFlag = true;
    if (this.phase === 'running') this.phase = 'terminated';
    this.options.onChange();
  }

  private async runProbes(proc: ContainerProcess, target: ProbeTarget, signal: AbortSignal): Promise<void> {
    const { startupProbe, livenessProbe, readinessProbe } = this.options.container;
    const startedAt = proc.startedAt.getTime();
    if (startupProbe) {
      const passed = await this.probeLoop('startup', startupProbe, proc, target, startedAt, signal);
      if (!passed) return;
    }
    this.startedFlag = true;
    if (!readinessProbe) this.readyFlag = true;
    this.options.onChange();
    // initialDelaySeconds counts from the container start, but nothing probes before startup passed.
    const notBefore = Date.now();
    const loops: Array<Promise<boolean>> = [];
    if (livenessProbe) loops.push(this.probeLoop('liveness', livenessProbe, proc, target, startedAt, signal, notBefore));
    if (readinessProbe) loops.push(this.probeLoop('readiness', readinessProbe, proc, target, startedAt, signal, notBefore));
    await Promise.all(loops);
  }

  /** Runs one probe until aborted; startup returns true on success, liveness/startup kill the container after the threshold. */
  private async probeLoop(
    kind: ProbeKind,
    probe: V1Probe,
    proc: ContainerProcess,
    target: ProbeTarget,
    startedAt: number,
    signal: AbortSignal,
    notBefore = startedAt,
  ): Promise<boolean> {
    const timing = probeTiming(probe, kind);
    const state = new ProbeState(kind, timing);
    let lastAttemptAt: number | undefined;
    while (!signal.aborted) {
      const due = Math.max(nextProbeAt(timing, startedAt, lastAttemptAt), notBefore);
      if (!(await sleep(due - Date.now(), signal))) return false;
      lastAttemptAt = Date.now();
      const outcome = await runProbe(probe, target, timing.timeoutMs);
      if (signal.aborted || !proc.running) return false;
      const changed = state.record(outcome.ok);
      if (!outcome.ok) this.options.onEvent('Warning', 'Unhealthy', `${capitalize(kind)} probe failed: ${outcome.message}`);
      if (kind === 'startup' && state.result === 'success') return true;
      if (kind === 'readiness' && changed) {
        this.readyFlag = state.result === 'success';
        this.options.onChange();
      }
      if ((kind === 'liveness' || kind === 'startup') && changed && !outcome.ok) {
        const graceMs = probe.terminationGracePeriodSeconds !== undefined ? probe.terminationGracePeriodSeconds * 1000 : this.options.terminationGraceMs;
        this.options.onEvent('Normal', 'Killing', `Container ${this.name} failed ${kind} probe, will be restarted`);
        this.options.logger.info({ container: this.name, probe: kind, message: outcome.message }, 'probe failed, killing container');
        this.readyFlag = false;
        this.options.onChange();
        await proc.stop(graceMs);
        return false;
      }
    }
    return false;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1;
}
