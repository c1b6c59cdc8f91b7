import type { KubernetesObject } from '@kubernetes/client-node';
import { describeApiError } from '../lib/kube/client.js';
import { Informer, type ListResult } from '../lib/kube/informer.js';
import type { Logger } from '../lib/log.js';
import { group, kind, plural, version } from '../api/crd/types.js';
import { EventRecorder } from './events.js';
import { HaNodeClient } from './hanode-client.js';
import type { OperatorKubeApi, RawCluster } from './kube-api.js';
import type { OperatorMetrics } from './metrics.js';
import { Labels } from '../api/naming.js';
import { WorkQueue, type Priority } from './queue.js';
import { backupChanged, backupClusterKey, collectionPath, leaderLeaseChanged, leaderLeases, ownedKinds, ReadCache } from './read-cache.js';
import { backupKind, backupPlural } from '../api/crd/backup-kind.js';
import { databaseKind, databasePlural } from '../api/crd/database-kind.js';
import { databaseChanged } from './reconcile/managed-databases.js';
import { reconcileCluster } from './reconcile/cluster.js';
import type { ReconcileDeps, ReconcileResult } from './reconcile/deps.js';

export interface ControllerOptions {
  api: OperatorKubeApi;
  metrics: OperatorMetrics;
  logger: Logger;
  operatorVersion: string;
  /** Namespaces to watch; empty means all. */
  namespaces: string[];
  relistIntervalMs?: number;
  workers?: number;
  haNode?: HaNodeClient;
  /** How long a new CA is only trusted before it signs (default: defaultCaRotation's). */
  caTrustPropagationMs?: number;
}

/** Every owned object carries its cluster's name in this label (PVCs made from templates too). */
const ownedSelector = Labels.cluster;

/**
 * How urgent a watch event is: a changed spec (generation) or a deletion of a DatabaseCluster is
 * the user's and goes first; anything else (status writes, owned objects, new objects at start)
 * is normal. Periodic resyncs come last.
 */
export function eventPriority(object: KubernetesObject, previous: KubernetesObject | undefined): Priority {
  if (object.kind !== kind || !previous) return 'normal';
  if (object.metadata?.generation !== previous.metadata?.generation) return 'high';
  return object.metadata?.deletionTimestamp && !previous.metadata?.deletionTimestamp ? 'high' : 'normal';
}

/**
 * Watches DatabaseClusters and every kind they own, and feeds cluster keys into a work queue
 * served by a few workers. Owned-object events map back to their cluster through the
 * keelson.io/cluster label, so any change to a pod (its role label, readiness) or to an owned
 * object someone edited or deleted triggers a pass. The watch caches double as the reconciler's
 * read layer (operator/read-cache.ts): a pass over an unchanged cluster sends no request.
 */
export class Controller {
  private readonly queue: WorkQueue;
  private readonly informers: Array<Informer<KubernetesObject>> = [];
  /** Watches the controller works without (the Backup kind may not be installed): not awaited, not in health. */
  private readonly optionalInformers: Array<Informer<KubernetesObject>> = [];
  private readonly deps: ReconcileDeps;
  private readonly cache = new ReadCache();
  private running = false;
  private started = false;
  private workers: Array<Promise<void>> = [];

  constructor(private readonly options: ControllerOptions) {
    const { metrics } = options;
    this.queue = new WorkQueue({ onDepthChange: (depth) => metrics.queueDepth.set(depth) });
    const recordWrite = (kind: string, verb: string) => metrics.writes.inc({ kind, verb });
    this.deps = {
      api: options.api,
      haNode: options.haNode ?? new HaNodeClient(),
      events: new EventRecorder(options.api.core, options.logger, (verb) => recordWrite('Event', verb)),
      recordWrite,
      logger: options.logger,
      operatorVersion: options.operatorVersion,
      ...(options.caTrustPropagationMs !== undefined ? { caTrustPropagationMs: options.caTrustPropagationMs } : {}),
    };
  }

  get synced(): boolean {
    return this.informers.length > 0 && this.informers.every((informer) => informer.hasSynced);
  }

  /**
   * Informers that heard nothing (no event, bookmark or successful relist) for longer than
   * `maxSilenceMs`; a silently dead watch whose relists also fail shows up here and in /readyz.
   */
  staleInformers(maxSilenceMs: number, now = Date.now()): number {
    return this.informers.filter((informer) => informer.hasSynced && now - informer.lastActivity > maxSilenceMs).length;
  }

  private informer<T extends KubernetesObject>(
    resource: string,
    path: string,
    list: (resourceVersion: string) => Promise<ListResult<T>>,
    toKey: (object: T) => string | undefined,
    labelSelector?: string,
    resync = false,
    relevant: (object: T, previous: T | undefined) => boolean = () => true,
    optional = false,
  ): Informer<T> {
    const enqueue = (object: T, priority: Priority) => {
      const key = toKey(object);
      if (!key) return;
      // A user's change sets a new goal: it neither waits behind others nor inherits the old back-off.
      if (priority === 'high') this.queue.settled(key);
      this.queue.add(key, priority);
    };
    const informer = new Informer<T>({
      kubeConfig: this.options.api.kubeConfig,
      path,
      list,
      labelSelector,
      relistIntervalMs: this.options.relistIntervalMs,
      logger: this.options.logger,
      onEvent: (_event, object, previous) => {
        if (relevant(object, previous)) enqueue(object, eventPriority(object, previous));
      },
      onResync: resync ? (objects) => objects.forEach((object) => enqueue(object, 'low')) : undefined,
      onWatchRestart: (reason) => this.options.metrics.watchRestarts.inc({ resource, reason }),
    });
    (optional ? this.optionalInformers : this.informers).push(informer as unknown as Informer<KubernetesObject>);
    return informer;
  }

  /**
   * Starts the informers and workers. A controller runs once: stop() shuts its queue down for
   * good, so every leadership term (and every retry after a failed start) needs a new one.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('a Controller runs once; create a new one to start again');
    this.started = true;
    const { api } = this.options;
    const scopes: Array<string | undefined> = this.options.namespaces.length > 0 ? this.options.namespaces : [undefined];
    const clusterKey = (object: KubernetesObject) => `${object.metadata?.namespace}/${object.metadata?.name}`;
    const ownerKey = (object: KubernetesObject) => {
      const cluster = object.metadata?.labels?.[Labels.cluster];
      return cluster ? `${object.metadata?.namespace}/${cluster}` : undefined;
    };
    const capabilities = await api.capabilities();
    const kinds = ownedKinds(capabilities.podDisruptionBudget);
    for (const ns of scopes) {
      const clusters = this.informer<RawCluster>(
        'databaseclusters',
        `/apis/${group}/${version}${ns ? `/namespaces/${ns}` : ''}/${plural}`,
        (resourceVersion) => api.listClusters(ns, resourceVersion),
        clusterKey,
        undefined,
        true,
      );
      this.cache.add(`${group}/${version}`, kind, ns, clusters as unknown as Informer<KubernetesObject>);
      for (const owned of kinds) {
        const informer = this.informer<KubernetesObject>(
          owned.resource,
          collectionPath(owned.apiVersion, owned.resource, ns),
          async (resourceVersion) => {
            const list = await api.objects.listAt(owned.apiVersion, owned.kind, ns, ownedSelector, resourceVersion);
            return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
          },
          ownerKey,
          ownedSelector,
        );
        this.cache.add(owned.apiVersion, owned.kind, ns, informer);
      }
      const leases = this.informer<KubernetesObject>(
        leaderLeases.resource,
        collectionPath(leaderLeases.apiVersion, leaderLeases.resource, ns),
        async (resourceVersion) => {
          const list = await api.objects.listAt(leaderLeases.apiVersion, leaderLeases.kind, ns, leaderLeases.selector, resourceVersion);
          return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
        },
        ownerKey,
        leaderLeases.selector,
        false,
        leaderLeaseChanged,
      );
      this.cache.add(leaderLeases.apiVersion, leaderLeases.kind, ns, leases);
      const backups = this.informer<RawCluster>(
        backupPlural,
        collectionPath(`${group}/${version}`, backupPlural, ns),
        () => api.listBackupsLive(ns),
        backupClusterKey,
        undefined,
        false,
        backupChanged,
        true,
      );
      this.cache.add(`${group}/${version}`, backupKind, ns, backups as unknown as Informer<KubernetesObject>);
      const databases = this.informer<RawCluster>(
        databasePlural,
        collectionPath(`${group}/${version}`, databasePlural, ns),
        () => api.listDatabasesLive(ns),
        backupClusterKey,
        undefined,
        false,
        databaseChanged,
        true,
      );
      this.cache.add(`${group}/${version}`, databaseKind, ns, databases as unknown as Informer<KubernetesObject>);
    }
    this.running = true;
    await Promise.all(this.informers.map((informer) => informer.start()));
    // Until (unless) the Backup watch syncs, the pass lists Backups from the API server.
    for (const informer of this.optionalInformers)
      informer
        .start()
        .catch((error: Error) =>
          this.options.logger.warn({ err: describeApiError(error) }, 'Backup or Database objects are not watched; read them with a LIST each pass'),
        );
    api.useCache(this.cache);
    const workers = this.options.workers ?? 4;
    this.workers = Array.from({ length: workers }, () => this.work());
    this.options.logger.info({ namespaces: this.options.namespaces.length > 0 ? this.options.namespaces : 'all' }, 'controller started');
  }

  async stop(): Promise<void> {
    this.running = false;
    // A cache this controller no longer keeps current must not answer the next term's reads.
    if (this.started) this.options.api.useCache(undefined);
    for (const informer of [...this.informers, ...this.optionalInformers]) informer.stop();
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  /** Runs one reconcile for a key now (used by workers and tests). */
  async reconcileKey(key: string): Promise<ReconcileResult> {
    const [namespace, name] = key.split('/') as [string, string];
    const raw = await this.options.api.readCluster(namespace, name);
    if (!raw) return {};
    return reconcileCluster(this.deps, raw);
  }

  private async work(): Promise<void> {
    const { metrics, logger } = this.options;
    while (this.running) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const end = metrics.reconcileDuration.startTimer();
      try {
        const result = await this.reconcileKey(key);
        this.queue.forget(key);
        metrics.reconcileTotal.inc({ result: result.requeueAfterMs ? 'requeue' : 'success' });
        this.queue.requeueAfterPass(key, result);
      } catch (err) {
        metrics.reconcileTotal.inc({ result: 'error' });
        metrics.reconcileErrors.inc();
        const delayMs = this.queue.addRateLimited(key);
        logger.warn({ key, err: describeApiError(err), delayMs }, 'reconcile failed; retrying with back-off');
      } finally {
        end();
        this.queue.done(key);
      }
    }
  }
}
