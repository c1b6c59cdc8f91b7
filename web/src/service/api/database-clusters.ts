import { request } from '../request';

/** DatabaseClusters business module: /api/v1/business/database-clusters (the request base holds /api/v1). */
const base = '/business/database-clusters/clusters';

export interface ClusterMember {
  name: string;
  role: 'primary' | 'replica' | 'unknown';
  ready: boolean;
  state: string | null;
  /** Bytes of WAL the replica is behind the primary; null when not reported. */
  lagBytes: number | null;
  timeline: number | null;
}

export interface ClusterRecord {
  id: string;
  name: string;
  namespace: string;
  instances: number | null;
  postgresVersion: number | null;
  phase: string | null;
  readyInstances: number;
  currentPrimary: string | null;
  members: ClusterMember[];
  createdAt: number | null;
  deleting: boolean;
}

export interface ClusterDetail extends ClusterRecord {
  spec: Record<string, unknown>;
  status: { switchover?: { targetInstance: string; result: string; message?: string }; conditions?: { type: string; status: string; message: string }[] } & Record<string, unknown>;
}

export interface ClusterSearchParams {
  current: number;
  size: number;
  namespace?: string | null;
  name?: string | null;
  phase?: string | null;
}

export interface ClusterPage {
  records: ClusterRecord[];
  total: number;
  current: number;
  size: number;
}

export function fetchSearchClusters(params: ClusterSearchParams) {
  return request<ClusterPage>({ url: `${base}/search`, method: 'post', data: params });
}

export function fetchGetCluster(namespace: string, name: string) {
  return request<ClusterDetail>({ url: `${base}/${namespace}/${name}`, method: 'get' });
}

export function fetchScaleCluster(namespace: string, name: string, instances: number) {
  return request<ClusterDetail>({ url: `${base}/${namespace}/${name}/scale`, method: 'post', data: { instances } });
}

export function fetchSwitchoverCluster(namespace: string, name: string, targetInstance: string) {
  return request<ClusterDetail>({ url: `${base}/${namespace}/${name}/switchover`, method: 'post', data: { targetInstance } });
}
