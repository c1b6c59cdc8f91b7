/** Legacy and aggregated discovery documents built from the resource registry. */
import { apiVersionOf, type ResourceRegistry, type ResourceType } from '../schema/resources.js';

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
/** Namespaces have no deletecollection on a real server. */
const verbsOf = (type: { createOnly?: boolean; group: string; plural: string }): string[] =>
  type.createOnly ? ['create'] : type.group === '' && type.plural === 'namespaces' ? allVerbs.filter((v) => v !== 'deletecollection') : allVerbs;

export const serverVersion = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4-keelson',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

function resourceEntries(type: ResourceType): Array<Record<string, unknown>> {
  const entries: Array<Record<string, unknown>> = [
    {
      name: type.plural,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: verbsOf(type),
      ...(type.shortNames?.length ? { shortNames: type.shortNames } : {}),
      ...(type.categories?.length ? { categories: type.categories } : {}),
      storageVersionHash: Buffer.from(`${type.group}/${type.plural}`).toString('base64').slice(0, 12),
    },
  ];
  if (type.statusSubresource)
    entries.push({ name: `${type.plural}/status`, singularName: '', namespaced: type.namespaced, kind: type.kind, verbs: ['get', 'patch', 'update'] });
  if (type.scale)
    entries.push({
      name: `${type.plural}/scale`,
      singularName: '',
      namespaced: type.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  if (type.plural === 'namespaces' && type.group === '')
    entries.push({ name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  if (type.plural === 'pods' && type.group === '')
    entries.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
  if (type.plural === 'serviceaccounts' && type.group === '')
    entries.push({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  return entries;
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group, version }),
    resources: types.flatMap(resourceEntries),
  };
}

export function apiVersions(host: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }] };
}

function groups(registry: ResourceRegistry): Map<string, string[]> {
  const byGroup = new Map<string, string[]>();
  for (const gv of registry.groupVersions()) {
    if (gv.group === '') continue;
    const versions = byGroup.get(gv.group) ?? [];
    versions.push(gv.version);
    byGroup.set(gv.group, versions);
  }
  return byGroup;
}

/** Kubernetes version ordering: v2 > v1 > v1beta2 > v1beta1 > v1alpha1. */
function versionRank(v: string): number[] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [-1, 0, 0];
  return [Number(m[1]), m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[3] ?? 0)];
}

export function sortVersions(versions: string[]): string[] {
  return [...versions].sort((a, b) => {
    const ra = versionRank(a);
    const rb = versionRank(b);
    return rb[1] - ra[1] || rb[0] - ra[0] || rb[2] - ra[2] || a.localeCompare(b);
  });
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups(registry)].map(([name, versions]) => {
      const sorted = sortVersions(versions).map((version) => ({ groupVersion: `${name}/${version}`, version }));
      return { name, versions: sorted, preferredVersion: sorted[0] };
    }),
  };
}

export function apiGroup(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const versions = groups(registry).get(group);
  if (!versions) return undefined;
  const sorted = sortVersions(versions).map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: sorted, preferredVersion: sorted[0] };
}

/**
 * The aggregated discovery version an Accept header asks for (kubectl 1.32 lists v2 first, older
 * clients v2beta1), in the client's order of preference; undefined for legacy discovery.
 */
export function aggregatedVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const part of (accept ?? '').split(',')) {
    const m = /g=apidiscovery\.k8s\.io;v=(v2|v2beta1);as=APIGroupDiscoveryList/.exec(part);
    if (m) return m[1] as 'v2' | 'v2beta1';
    if (/^\s*application\/json\s*$/.test(part)) return undefined;
  }
  return undefined;
}

export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

function aggregatedResource(type: ResourceType): Record<string, unknown> {
  const subresources: Array<Record<string, unknown>> = [];
  if (type.statusSubresource)
    subresources.push({
      subresource: 'status',
      responseKind: { group: type.group, version: type.version, kind: type.kind },
      verbs: ['get', 'patch', 'update'],
    });
  if (type.scale)
    subresources.push({ subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] });
  if (type.plural === 'serviceaccounts' && type.group === '')
    subresources.push({ subresource: 'token', responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] });
  return {
    resource: type.plural,
    responseKind: { group: type.group, version: type.version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: verbsOf(type),
    ...(type.shortNames?.length ? { shortNames: type.shortNames } : {}),
    ...(type.categories?.length ? { categories: type.categories } : {}),
    ...(subresources.length ? { subresources } : {}),
  };
}

/** APIGroupDiscoveryList for `/api` (core only) or `/apis` (all named groups). */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean, version: 'v2' | 'v2beta1' = 'v2'): Record<string, unknown> {
  const items: Array<Record<string, unknown>> = [];
  const names = core ? [''] : [...groups(registry).keys()];
  for (const name of names) {
    const versions = sortVersions([
      ...new Set(
        registry
          .all()
          .filter((t) => t.group === name)
          .map((t) => t.version),
      ),
    ]);
    items.push({
      metadata: { name, creationTimestamp: null },
      versions: versions.map((version) => ({
        version,
        resources: registry
          .all()
          .filter((t) => t.group === name && t.version === version)
          .map(aggregatedResource),
        freshness: 'Current',
      })),
    });
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}
