/**
 * The distributed configuration store as the HA loop sees it: one snapshot of the cluster per
 * cycle plus a few compare-and-swap writes. The Lease implementation lives in lease-dcs.ts.
 */

/** Dynamic configuration shared by all members (the `/config` document). */
export interface DynamicConfig {
  ttl?: number;
  loop_wait?: number;
  retry_timeout?: number;
  maximum_lag_on_failover?: number;
  check_timeline?: boolean;
  primary_start_timeout?: number;
  primary_hang_timeout?: number;
  failsafe_mode?: boolean;
  synchronous_mode?: boolean | 'on' | 'off' | 'quorum';
  synchronous_mode_strict?: boolean;
  synchronous_node_count?: number;
  db?: {
    use_slots?: boolean;
    use_rewind?: boolean;
    parameters?: Record<string, string | number | boolean>;
    pg_hba?: unknown;
  };
  [key: string]: unknown;
}

export interface LeaderRecord {
  holder: string;
  /** leaseDurationSeconds of the record, the TTL the holder promised. */
  ttl: number;
  acquireTime?: string;
  renewTime?: string;
  transitions: number;
  /** Last WAL position the leader published (bytes). */
  optime?: number;
  /**
   * Set only on a record released after a clean stop: the start of the old primary's shutdown
   * checkpoint record. Whoever lacks WAL up to here would lose commits by promoting.
   */
  releasedCheckpoint?: number;
  /** The member that made that clean release; it comes back holding all of that WAL. */
  releasedBy?: string;
  /** Replication slot positions the leader published. */
  slots?: Record<string, number>;
  /** Failsafe members (name → api_url) the leader must reach when the API server is gone. */
  failsafe?: Record<string, string>;
  resourceVersion?: string;
}

export interface MemberTags {
  nofailover?: boolean;
  noloadbalance?: boolean;
  clonefrom?: boolean;
  nosync?: boolean;
  [key: string]: unknown;
}

/** What each member publishes about itself once per loop (Patroni's member key). */
export interface MemberRecord {
  name: string;
  conn_url: string;
  api_url: string;
  host: string;
  port: number;
  role: string;
  state: string;
  timeline?: number;
  xlog_location?: number;
  receive_lsn?: number;
  replay_lsn?: number;
  replication_state?: string;
  tags: MemberTags;
  version: string;
  /** Epoch milliseconds of the last write of this record. */
  heartbeat: number;
  pending_restart?: boolean;
  /** The database system identifier of the member's data directory. */
  system_identifier?: string;
  /** Standby leader only: the remote source's timeline and WAL end as the WAL receiver last heard them. */
  standby_source?: { timeline: number; lsn: number };
  /** A primary demoted into a standby leader: its last timeline and shutdown checkpoint. */
  standby_demotion?: { system_identifier: string; timeline: number; checkpoint_location: number; at: string };
  /** Parameter values this member keeps out of postgresql.conf, or the server could not apply (the node document's config_errors). */
  config_errors?: { parameter?: string; source: string; error: string }[];
  /** The last switchover this member (as leader) refused, and why. */
  switchover_aborted?: { at: number; reason: string };
  /** Usage of its volumes, used bytes rounded up to a hundredth of the capacity (disk/usage.ts). */
  volumes?: PublishedVolume[];
}

export interface PublishedVolume {
  volume: 'data' | 'wal';
  capacity_bytes: number;
  used_bytes: number;
  free_bytes: number;
  full?: true;
}

export type HistoryEntry = [timeline: number, lsn: number, reason: string, timestamp: string, newLeader?: string];

export interface FailoverRecord {
  leader?: string;
  member?: string;
  scheduled_at?: string;
}

export interface SyncRecord {
  leader?: string;
  /** Synchronous standbys (on/strict), or the voters in quorum mode. */
  sync_standby: string[];
  /** Quorum mode: how many voters besides itself a racer must see to be sure it has every acknowledged commit. */
  quorum?: number;
}

/** Condition of a dynamic-configuration write. */
export type ConfigWriteCondition =
  /** Write only when no configuration is stored (bootstrap). */
  | { onlyIfMissing: true }
  /** Compare-and-swap: write only when the config key still has this resourceVersion ('' = the key does not exist). */
  | { expectedVersion: string };

export interface ClusterView {
  /** The leader record when a holder is set and its lease has not expired by local observation. */
  leader?: LeaderRecord;
  /** The raw record whatever its state (for the timeline of the last leader, optime, etc.). */
  leaderRecord?: LeaderRecord;
  config?: DynamicConfig;
  /** resourceVersion of the key holding the configuration ('' when absent), for compare-and-swap writes. */
  configVersion?: string;
  /** undefined: nobody has started bootstrap; "": bootstrap in progress; otherwise the system identifier. */
  initialize?: string;
  history: HistoryEntry[];
  failover?: FailoverRecord;
  sync?: SyncRecord;
  members: MemberRecord[];
}

export interface Dcs {
  /** Reads every key of the cluster. Throws when the API cannot be reached. */
  getCluster(): Promise<ClusterView>;
  /** The cluster from the watch cache without an API request; undefined when the cache cannot be trusted now. */
  cachedCluster(): ClusterView | undefined;
  /**
   * The cluster for one HA cycle: the watch cache while it is sound, the API server was heard from
   * within silentMs and it shows a live leader; otherwise (and at least every few minutes) a LIST.
   */
  clusterForLoop(silentMs: number): Promise<ClusterView>;
  /** CAS acquire of an empty or expired leader record. */
  attemptToAcquireLeader(optime: number | undefined): Promise<boolean>;
  /** CAS acquire of a live-looking record at exactly the expected resourceVersion (early takeover after a crash). */
  takeOverLeader(expected: LeaderRecord, optime: number | undefined): Promise<boolean>;
  /** CAS renew of our own leader record; false when someone else holds it; throws when the API cannot be reached. */
  updateLeader(optime: number | undefined, slots?: Record<string, number>, failsafe?: Record<string, string> | null): Promise<boolean>;
  /**
   * Clears the holder of our own record so others need not wait for expiry. shutdownCheckpoint:
   * lastOptime is the shutdown checkpoint of a clean stop (published as releasedCheckpoint).
   */
  deleteLeader(lastOptime: number | undefined, options?: { shutdownCheckpoint?: boolean }): Promise<boolean>;
  /** True while this member holds the leader record and its own renewal has not expired. */
  isLeader(): boolean;
  /**
   * Failsafe mode with the API server gone: every member confirmed over the REST API, a round that
   * started `elapsedMs` ago, so our leadership holds for ttl from then although no Lease write
   * could record it (Patroni's set_is_leader in failsafe). No effect unless we hold the record.
   */
  holdLeadershipInFailsafe(elapsedMs: number): void;
  /** Takes the initialize key for bootstrap (only one member wins). */
  takeInitialize(): Promise<boolean>;
  /** Stores the system identifier after bootstrap (or clears the key when bootstrap failed). */
  setInitialize(sysid: string | undefined): Promise<void>;
  /** Writes the dynamic configuration; false when the condition does not hold (CAS conflict, or already stored). */
  setConfig(config: DynamicConfig, condition?: ConfigWriteCondition): Promise<boolean>;
  setHistory(history: HistoryEntry[]): Promise<void>;
  setFailover(failover: FailoverRecord | undefined): Promise<boolean>;
  setSync(sync: SyncRecord | undefined): Promise<boolean>;
  /** Publishes this member's record when it changed or its heartbeat needs a refresh; true when written. */
  touchMember(record: MemberRecord): Promise<boolean>;
  /** Epoch seconds of the last successful API call. */
  lastSeen(): number;
  /** Called when something in the DCS changed or the leader record expired. */
  onWake(listener: (reason: string) => void): void;
  start(): Promise<void>;
  stop(): void;
}
