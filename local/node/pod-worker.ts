/**
 * Runs one pod on this node: gives it a loopback address, prepares its volumes, runs init
 * containers in order, then supervises the app containers, and tears everything down with the
 * pod's grace period.
 */
import { chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1Pod, V1PodStatus, V1SecurityContext, V1PodSecurityContext } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.js';
import type { AddressPool } from './addresses.js';
import type { BackoffPolicy } from './backoff.js';
import { ContainerRunner, LaunchError } from './container.js';
import { EnvResolutionError, expandVariables, resolveContainerEnv, type EnvSources } from './env.js';
import { localizeArgv, resolveContainerCommand, type ImageMapping } from './images.js';
import { buildPodStatus, type ContainerView } from './pod-status.js';
import { killContainerProcesses, type ProcessSpec } from './process.js';
import type { ProbeTarget } from './probe-actions.js';
import { rewriteLoopback } from './loopback.js';
import { enterNamespace } from './netns/enter.js';
import type { PodNamespace, PodNetworkProvider } from './netns/pod-network.js';
import { sleep } from './time.js';
import { containerMounts, podDirectory, podLogDirectory, prepareVolumes, projectedLocalizer, rewriteMountPaths, volumeHostPath } from './volumes.js';
import { volumesProjecting, writeProjectedVolume, type ProjectedKind } from './projected-volumes.js';

export interface LocalUser {
  name: string;
  uid: number;
  gid: number;
}

export interface PodWorkerDeps {
  nodeDir: string;
  nodeName: string;
  hostIP: string;
  addresses: AddressPool;
  images: ImageMapping[];
  sources: EnvSources;
  /** Variables every container gets first (PATH, KUBECONFIG, KUBERNETES_SERVICE_*). */
  baseEnv: Record<string, string>;
  /** Account for containers that ask not to run as root while the agent is root. */
  nonRootUser?: LocalUser;
  backoff: BackoffPolicy;
  /** Namespace mode: each pod gets its own network namespace (hostNetwork pods stay on the node's). */
  network?: PodNetworkProvider;
  /** Prefix of the per-container process marker (unique per node). */
  markerPrefix: string;
  logger: Logger;
  /** Writes the pod's own kubeconfig into its directory; undefined when containers use baseEnv's. */
  kubeconfigFor(pod: V1Pod, podDir: string): Promise<string | undefined>;
  /** Returns why a claim is not usable yet, or undefined once it is bound. */
  ensureClaim(namespace: string, claimName: string): Promise<string | undefined>;
  onStatus(worker: PodWorker): void;
  onEvent(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Whether a container must not run as root, from its own or the pod's securityContext. */
export function wantsNonRoot(container: V1Container, pod: V1PodSecurityContext | undefined): boolean {
  const own: V1SecurityContext | undefined = container.securityContext;
  const uid = own?.runAsUser ?? pod?.runAsUser;
  if (uid !== undefined) return uid !== 0;
  return (own?.runAsNonRoot ?? pod?.runAsNonRoot) === true;
}

/** Delays between attempts to set a pod's sandbox up: 1 s, doubling, at most 30 s. */
const sandboxRetryFirstMs = 1000;
const sandboxRetryMaxMs = 30_000;

export class PodWorker {
  readonly uid: string;
  podIP?: string;
  private readonly startTime = new Date();
  private readonly initRunners: ContainerRunner[];
  private readonly runners: ContainerRunner[];
  private initialized = false;
  private initFailed = false;
  private message?: string;
  private readonly stopController = new AbortController();
  private running?: Promise<void>;
  private terminated = false;
  private kubeconfig?: string;
  private netns?: PodNamespace;
  /** Volumes are written; until then a changed Secret or ConfigMap only marks them stale. */
  private volumesPrepared = false;
  private volumesStale = false;
  /** Refreshes of projected volumes, one after another (never two writers in one folder). */
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    public pod: V1Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.uid = pod.metadata?.uid ?? '';
    const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
    const make = (container: V1Container, init: boolean): ContainerRunner =>
      new ContainerRunner({
        container,
        init,
        restartPolicy,
        backoff: deps.backoff,
        terminationGraceMs: this.graceMs(),
        launch: (instance) => this.launch(container, instance),
        onChange: () => deps.onStatus(this),
        onEvent: (type, reason, message) => deps.onEvent(this.pod, type, reason, message),
        logger: deps.logger.child({ pod: this.key, container: container.name }),
      });
    this.initRunners = (pod.spec?.initContainers ?? []).map((c) => make(c, true));
    this.runners = (pod.spec?.containers ?? []).map((c) => make(c, false));
    this.initialized = this.initRunners.length === 0;
  }

  get key(): string {
    return `${this.pod.metadata?.namespace}/${this.pod.metadata?.name}`;
  }

  /** Path of the pod's network namespace in namespace mode (for partitions in tests). */
  get networkNamespace(): string | undefined {
    return this.netns?.path;
  }

  get isTerminated(): boolean {
    return this.terminated;
  }

  /** Grace period from the pod spec (default 30 s). */
  graceMs(): number {
    return (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
  }

  get directory(): string {
    return podDirectory(this.deps.nodeDir, this.pod);
  }

  get logDirectory(): string {
    return podLogDirectory(this.deps.nodeDir, this.pod);
  }

  start(): void {
    this.running ??= this.run().catch((err: unknown) => {
      this.message = err instanceof Error ? err.message : String(err);
      this.deps.logger.error({ pod: this.key, err }, 'pod failed to start');
      this.deps.onStatus(this);
    });
  }

  /**
   * The pod's address, network namespace, folders and kubeconfig. A failure (an `ip` command timing
   * out under load, a TokenRequest refused for a moment) is retried with a growing delay, as a
   * kubelet retries a pod sandbox, after undoing what the attempt had set up. Returns false when
   * the pod was stopped meanwhile.
   */
  private async setUpSandbox(): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        // hostNetwork pods share the node address, as on a real node.
        this.podIP = this.pod.spec?.hostNetwork ? this.deps.hostIP : this.deps.addresses.allocate('low');
        if (this.deps.network && !this.pod.spec?.hostNetwork) this.netns = await this.deps.network.attach(this.podIP);
        await mkdir(this.directory, { recursive: true });
        await mkdir(this.logDirectory, { recursive: true });
        if (this.deps.nonRootUser) await chown(this.directory, this.deps.nonRootUser.uid, this.deps.nonRootUser.gid);
        this.kubeconfig = await this.deps.kubeconfigFor(this.pod, this.directory);
        return true;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const delayMs = Math.min(sandboxRetryFirstMs * 2 ** (attempt - 1), sandboxRetryMaxMs);
        this.message = `pod sandbox: ${message} (attempt ${attempt}, next in ${delayMs / 1000} s)`;
        this.deps.logger.warn({ pod: this.key, attempt, err: message }, 'pod sandbox setup failed, retrying');
        this.deps.onEvent(this.pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${message}`);
        this.deps.onStatus(this);
        await this.releaseNetwork();
        if (!(await sleep(delayMs, this.stopController.signal))) return false;
      }
    }
  }

  /** Gives the pod's network namespace and address back (teardown, or a sandbox attempt that failed). */
  private async releaseNetwork(): Promise<void> {
    if (this.netns) {
      await this.deps.network
        ?.detach(this.netns.podIP)
        .catch((err: unknown) => this.deps.logger.warn({ pod: this.key, err: (err as Error).message }, 'pod network teardown failed'));
      this.netns = undefined;
    }
    if (this.podIP && !this.pod.spec?.hostNetwork) this.deps.addresses.release(this.podIP);
    this.podIP = undefined;
  }

  private async run(): Promise<void> {
    if (!(await this.setUpSandbox())) return;
    this.message = undefined;
    this.deps.onStatus(this);
    for (;;) {
      const waiting = await this.volumesWaiting().catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
      if (waiting === undefined) break;
      this.message = waiting;
      this.deps.onStatus(this);
      if (!(await sleep(2000, this.stopController.signal))) return;
    }
    this.message = undefined;
    this.volumesPrepared = true;
    // A Secret or ConfigMap that changed while the volumes were written: write them once more.
    if (this.volumesStale) {
      this.volumesStale = false;
      await this.volumesWaiting().catch(() => undefined);
    }
    for (const runner of this.initRunners) {
      await runner.start();
      if (this.stopController.signal.aborted) return;
      if (runner.lastExitCode !== 0) {
        this.initFailed = true;
        this.deps.onStatus(this);
        return;
      }
    }
    this.initialized = true;
    this.deps.onStatus(this);
    for (const runner of this.runners) void runner.start();
  }

  /**
   * A Secret or ConfigMap this node watches changed: rewrite the volumes of this pod that project
   * it, as a kubelet keeps them current. Returns how many files changed.
   */
  refreshProjected(kind: ProjectedKind, name: string, data: Record<string, string>): Promise<number> {
    const volumes = volumesProjecting(this.pod, kind, name);
    if (volumes.length === 0 || this.terminated) return Promise.resolve(0);
    if (!this.volumesPrepared) {
      this.volumesStale = true;
      return Promise.resolve(0);
    }
    const run = this.refreshing.then(async () => {
      let changed = 0;
      for (const volume of volumes) {
        const ref = volume.secret ?? volume.configMap ?? {};
        changed += await writeProjectedVolume(
          volumeHostPath(this.deps.nodeDir, this.pod, volume),
          data,
          ref,
          this.deps.nonRootUser,
          projectedLocalizer(this.deps.nodeDir, this.pod, kind),
        );
      }
      if (changed > 0) this.deps.logger.info({ pod: this.key, [kind]: name, files: changed }, 'projected volume updated');
      return changed;
    });
    this.refreshing = run.then(
      () => undefined,
      (err: unknown) =>
        this.deps.logger.warn({ pod: this.key, [kind]: name, err: err instanceof Error ? err.message : String(err) }, 'projected volume update failed'),
    );
    return run;
  }

  /** Why volumes are not ready yet (missing claim, configmap or secret), or undefined when prepared. */
  private async volumesWaiting(): Promise<string | undefined> {
    const namespace = this.pod.metadata?.namespace ?? 'default';
    for (const volume of this.pod.spec?.volumes ?? []) {
      if (!volume.persistentVolumeClaim) continue;
      const waiting = await this.deps.ensureClaim(namespace, volume.persistentVolumeClaim.claimName);
      if (waiting) return waiting;
    }
    const prepared = await prepareVolumes(this.deps.nodeDir, this.pod, this.deps.sources, this.deps.nonRootUser);
    return prepared.ready ? undefined : prepared.message;
  }

  private async launch(container: V1Container, instance: number): Promise<ProcessSpec & { probeTarget: ProbeTarget }> {
    const resolved = resolveContainerCommand(container, this.deps.images);
    if (!resolved.ok) throw new LaunchError(resolved.message, resolved.reason);
    const podIP = this.podIP ?? '';
    const mounts = containerMounts(this.deps.nodeDir, this.pod, container.volumeMounts);
    const base: Record<string, string> = {
      ...this.deps.baseEnv,
      ...(this.kubeconfig ? { KUBECONFIG: this.kubeconfig } : {}),
      HOSTNAME: this.pod.spec?.hostname ?? this.pod.metadata?.name ?? '',
      KEELSON_LOCAL_POD_IP: podIP,
      KEELSON_LOCAL_MOUNTS: JSON.stringify(Object.fromEntries(mounts.map((m) => [m.mountPath, m.hostPath]))),
    };
    let env: Record<string, string>;
    try {
      env = await resolveContainerEnv(this.pod, container, { podIP, hostIP: this.deps.hostIP, nodeName: this.deps.nodeName }, this.deps.sources, base);
    } catch (err) {
      if (err instanceof EnvResolutionError) throw new LaunchError(err.message, err.reason);
      throw err;
    }
    // Only values from the manifest are rewritten; the agent's own variables already fit the host.
    const localize = (value: string): string => rewriteLoopback(rewriteMountPaths(value, mounts), podIP);
    for (const [name, value] of Object.entries(env)) if (base[name] !== value) env[name] = localize(value);
    const argv = localizeArgv(resolved, (arg) => localize(expandVariables(arg, env)));
    const user = wantsNonRoot(container, this.pod.spec?.securityContext) && process.getuid?.() === 0 ? this.deps.nonRootUser : undefined;
    if (wantsNonRoot(container, this.pod.spec?.securityContext) && process.getuid?.() === 0 && !user) {
      throw new LaunchError('container must not run as root and no local non-root account is configured (--run-as-user)', 'CreateContainerConfigError');
    }
    const cwd = container.workingDir ? rewriteMountPaths(container.workingDir, mounts) : this.directory;
    const probeTarget: ProbeTarget = { podIP, ports: container.ports ?? [], env, uid: user?.uid, gid: user?.gid, cwd, netns: this.netns?.path };
    const launch = enterNamespace(this.netns?.path, { argv, uid: user?.uid, gid: user?.gid });
    return {
      argv: launch.argv,
      env,
      cwd,
      logFile: join(this.logDirectory, `${container.name}.log`),
      marker: `${this.deps.markerPrefix}${this.uid}/${container.name}/${instance}`,
      uid: launch.uid,
      gid: launch.gid,
      probeTarget,
    };
  }

  status(previous?: V1PodStatus): V1PodStatus {
    const view = (runner: ContainerRunner, container: V1Container): ContainerView => ({
      ready: runner.ready,
      everStarted: runner.everStarted,
      finished: runner.finished,
      exitCode: runner.lastExitCode,
      status: runner.status(container.image ?? ''),
    });
    const initContainers = this.pod.spec?.initContainers ?? [];
    const containers = this.pod.spec?.containers ?? [];
    return buildPodStatus(
      {
        podIP: this.podIP,
        hostIP: this.deps.hostIP,
        startTime: this.startTime,
        init: this.initRunners.map((r, i) => view(r, initContainers[i])),
        containers: this.runners.map((r, i) => view(r, containers[i])),
        initialized: this.initialized,
        initFailed: this.initFailed,
        message: this.message,
      },
      previous?.conditions,
    );
  }

  /** SIGTERM every container, SIGKILL after graceMs, then free the address and the pod's scratch folders. */
  async terminate(graceMs: number): Promise<void> {
    if (this.terminated) return;
    this.stopController.abort();
    await Promise.all([...this.initRunners, ...this.runners].map((r) => r.stop(graceMs)));
    await this.cleanup();
  }

  /**
   * A crash of every process the pod's containers run (SIGKILL, as the OOM killer would), the
   * worker left running: its containers restart per restartPolicy. Returns how many were killed.
   */
  crash(): number {
    return killContainerProcesses(`${this.deps.markerPrefix}${this.uid}/`, 'SIGKILL', true);
  }

  /** Immediate SIGKILL (node shutdown). */
  async kill(): Promise<void> {
    this.stopController.abort();
    for (const runner of [...this.initRunners, ...this.runners]) runner.kill();
    await Promise.all([...this.initRunners, ...this.runners].map((r) => r.stop(0)));
    await this.cleanup();
  }

  private async cleanup(): Promise<void> {
    this.terminated = true;
    // A projected-volume refresh already under way writes into the pod's folder: let it finish,
    // or the removal meets a file created behind it (ENOTEMPTY). Retries cover any other writer.
    await this.refreshing;
    await this.releaseNetwork();
    await rm(this.directory, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
}
