import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { FuzzTarget } from '../campaign.js';
import type { RawAnswer } from '../raw-http.js';
import type { FuzzProfile, KnownCase } from '../requests.js';
import type { Random } from '../random.js';
import { forgedJwts, spawnKeelson } from './process.js';

/**
 * The API server stand-in as a `keelson local apiserver --http` process holding a few seeded
 * objects. State is the store's revision (the resourceVersion of any list): a refused request
 * must not move it. Seeded objects that an accepted request deleted are put back.
 */
const secretValue = 'fuzz-standin-secret-value-88';
const ns = '/api/v1/namespaces/default';
const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';

const seeds: Array<{ collection: string; body: Record<string, unknown> }> = [
  ...[0, 1, 2].map((i) => ({
    collection: `${ns}/configmaps`,
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: 'fuzz' } }, data: { k: `v${i}` } },
  })),
  { collection: `${ns}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's-0' }, stringData: { password: secretValue } } },
  {
    collection: leases,
    body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l-0' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 10 } },
  },
  { collection: `${ns}/pods`, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p-0' }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
];

const fourXX = (answer: RawAnswer): string | undefined =>
  typeof answer.status === 'number' && answer.status >= 400 && answer.status < 500 ? undefined : `expected a 4xx refusal, got ${answer.status}`;
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const freshName = (rng: Random): string => `fz-${rng.text(10, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;

function knownCases(auth: () => Array<[string, string]>): KnownCase[] {
  const withType = (type: string): Array<[string, string]> => [...auth(), ['Content-Type', type]];
  const configMap = (rng: Random, metadata: Record<string, unknown> = {}) =>
    json({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: freshName(rng), ...metadata } });
  return [
    {
      name: 'delete-collection-bad-query',
      build: (rng) => ({
        method: 'DELETE',
        target: `${ns}/configmaps?${rng.pick(['dryRun=bogus', 'limit=abc', 'resourceVersion=abc', 'gracePeriodSeconds=x', 'propagationPolicy=Nope'])}`,
        headers: auth(),
        body: Buffer.alloc(0),
        authenticated: true,
      }),
      // The real server: 400 for a value that does not parse (limit=abc), 422 for an option value it
      // does not support (dryRun=bogus, propagationPolicy=Nope). Either way nothing is deleted.
      judge: (answer) => (answer.status === 400 || answer.status === 422 ? undefined : `expected 400 or 422, got ${answer.status}`),
    },
    {
      name: 'deep-nesting-create',
      build: () => ({
        method: 'POST',
        target: `${ns}/configmaps`,
        headers: withType('application/json'),
        body: Buffer.from(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`),
        authenticated: true,
      }),
      judge: fourXX,
    },
    {
      name: 'json-patch-removes-metadata',
      build: () => ({
        method: 'PATCH',
        target: `${ns}/configmaps/cm-0`,
        headers: withType('application/json-patch+json'),
        body: json([{ op: 'remove', path: '/metadata' }]),
        authenticated: true,
      }),
      judge: fourXX,
    },
    {
      name: 'apply-without-kind',
      build: (rng) => ({
        method: 'PATCH',
        target: `${ns}/configmaps/${freshName(rng)}?fieldManager=fuzz`,
        headers: withType('application/apply-patch+yaml'),
        body: Buffer.from('metadata:\n  name: x\n'),
        authenticated: true,
      }),
      judge: fourXX,
    },
    {
      name: 'huge-annotations',
      build: (rng) => ({
        method: 'POST',
        target: `${ns}/configmaps`,
        headers: withType('application/json'),
        body: configMap(rng, { annotations: { big: 'a'.repeat(300 * 1024) } }),
        authenticated: true,
      }),
      judge: fourXX,
    },
    {
      name: 'bad-finalizer',
      build: (rng) => ({
        method: 'POST',
        target: `${ns}/configmaps`,
        headers: withType('application/json'),
        body: configMap(rng, { finalizers: ['bad finalizer!'] }),
        authenticated: true,
      }),
      judge: fourXX,
    },
    {
      name: 'lease-duration-beyond-int32',
      build: (rng) => ({
        method: 'POST',
        target: leases,
        headers: withType('application/json'),
        body: json({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: freshName(rng) }, spec: { leaseDurationSeconds: 2 ** 31 } }),
        authenticated: true,
      }),
      judge: fourXX,
    },
  ];
}

export async function startApiServerTarget(): Promise<FuzzTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-fuzz-apiserver-'));
  const server = spawnKeelson(['local', 'apiserver', '--http', '--listen', '127.0.0.1:0', '--kubeconfig', join(dir, 'kubeconfig'), '--dir', dir], {
    LOG_LEVEL: 'debug',
  });
  const stopAll = async (): Promise<void> => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = new URL(String((await server.firstJsonLine()).url));
    const kubeconfig = parse(readFileSync(join(dir, 'kubeconfig'), 'utf8')) as { users: Array<{ user: { token: string } }> };
    const token = kubeconfig.users[0].user.token;
    const auth = (): Array<[string, string]> => [['Authorization', `Bearer ${token}`]];
    const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
      const response = await fetch(new URL(path, url), {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
    };
    const seed = async (): Promise<void> => {
      for (const item of seeds) {
        const name = (item.body.metadata as { name: string }).name;
        if ((await request('GET', `${item.collection}/${name}`)).status === 404) await request('POST', item.collection, item.body);
      }
    };
    await seed();
    const profile: FuzzProfile = {
      paths: [
        '/api',
        '/api/v1',
        '/apis',
        '/version',
        '/healthz',
        '/readyz',
        '/openapi/v2',
        '/api/v1/namespaces',
        ns,
        `${ns}/configmaps`,
        `${ns}/configmaps/cm-0`,
        `${ns}/configmaps/cm-1`,
        `${ns}/secrets`,
        `${ns}/secrets/s-0`,
        `${ns}/pods`,
        `${ns}/pods/p-0`,
        `${ns}/pods/p-0/status`,
        `${ns}/services`,
        leases,
        `${leases}/l-0`,
        '/apis/apps/v1/namespaces/default/statefulsets',
        '/api/v1/configmaps',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      ],
      queryKeys: [
        'dryRun',
        'limit',
        'continue',
        'resourceVersion',
        'resourceVersionMatch',
        'labelSelector',
        'fieldSelector',
        'fieldManager',
        'fieldValidation',
        'force',
        'propagationPolicy',
        'gracePeriodSeconds',
        'timeoutSeconds',
        'pretty',
        'orphanDependents',
      ],
      bodies: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fz', labels: { a: 'b' }, annotations: { x: 'y' } }, data: { k: 'v' } },
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'l-0', resourceVersion: '1' },
          spec: { holderIdentity: 'b', leaseDurationSeconds: 15 },
        },
        { metadata: { labels: { app: 'other' } }, data: { k: 'changed' } },
        { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', gracePeriodSeconds: 0 },
      ],
      contentTypes: [
        'application/json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
        'application/json-patch+json',
        'application/apply-patch+yaml',
        'application/yaml',
        'application/vnd.kubernetes.protobuf',
      ],
      validAuth: auth,
      badAuth: [
        ['Authorization', 'Bearer '],
        ['Authorization', `Bearer ${forgedJwts[0]}`],
        ['Authorization', 'Basic Og=='],
        ['Authorization', `Bearer ${'x'.repeat(10_000)}`],
      ],
      knownCases: knownCases(auth),
      // A watch streams until its timeout: not a request/answer exchange.
      avoid: (fuzz) => /watch/i.test(fuzz.target),
    };
    // What a refused request must not change: the objects the fuzzer can reach, with what they
    // hold (not the server-wide revision, which background work of earlier requests may move).
    const collections = [
      `${ns}/configmaps`,
      `${ns}/secrets`,
      `${ns}/pods`,
      `${ns}/services`,
      leases,
      '/api/v1/namespaces',
      '/apis/apps/v1/namespaces/default/statefulsets',
    ];
    const revision = async (): Promise<string> => {
      const lists = await Promise.all(collections.map((path) => request('GET', path)));
      return JSON.stringify(
        lists.map((list) =>
          ((list.body.items as Array<Record<string, unknown>> | undefined) ?? []).map((item) => {
            const { metadata, status: _status, ...content } = item as { metadata: Record<string, unknown>; status?: unknown };
            return [metadata.name, metadata.labels, metadata.annotations, metadata.finalizers, metadata.deletionTimestamp, content];
          }),
        ),
      );
    };
    return {
      name: 'apiserver stand-in',
      host: url.hostname,
      port: Number(url.port),
      pid: server.pid,
      exited: server.exited,
      logs: server.logs,
      secrets: [
        { label: 'bearer token', value: token },
        { label: 'Secret data', value: secretValue },
        { label: 'Secret data (base64)', value: Buffer.from(secretValue).toString('base64') },
      ],
      profile,
      allows5xx: () => false,
      refused: (_request, answer) => typeof answer.status !== 'number' || answer.status >= 400,
      state: revision,
      afterAccepted: seed,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
