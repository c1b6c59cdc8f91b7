/** Options and results of the resource verbs, shared by the HTTP layer and the controllers. */
import type { ResourceType } from './schema/resources.js';
import type { KubeObject } from './types.js';

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /** The client named the manager (apply requires it; other writes default it from the User-Agent). */
  explicitManager?: boolean;
  fieldValidation?: string;
  /** Collects warnings for the response (unknown fields under fieldValidation=Warn). */
  warnings?: string[];
  force?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteResult {
  /** The object as it is now (deletion pending) or as it was (removed). */
  object: KubeObject;
  removed: boolean;
}

export const patchContentTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

export function typeKeyOf(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}
