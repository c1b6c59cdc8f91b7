/**
 * The one list of what Keelson needs from the machine, by part:
 *  - `local`: what the pods of `keelson local up` run (PostgreSQL, pgBackRest, PgBouncer);
 *  - `network`: network namespaces for pods (namespace mode, root only);
 *  - `tests`: the servers and tools the test suites talk to;
 *  - `oracle`: building and running the real kube-apiserver of the contract lane.
 * Each requirement names the Debian package that brings it and how to see that it is there.
 */
export type Part = 'local' | 'network' | 'tests' | 'oracle';

export const parts: readonly Part[] = ['local', 'network', 'tests', 'oracle'];

/** A program found on the search path, or a file at a fixed place. */
export type Probe = { program: string } | { file: string };

export interface Requirement {
  /** What is looked for, as a user would name it. */
  name: string;
  /** Why Keelson needs it (one line for the doctor's table). */
  purpose: string;
  /** The Debian package that provides it. */
  debianPackage: string;
  parts: readonly Part[];
  probe: Probe;
}

/** The PostgreSQL major version the pods and the tests run. */
export const postgresMajor = 15;

export const requirements: readonly Requirement[] = [
  {
    name: 'postgres',
    purpose: 'PostgreSQL server the pods and tests run',
    debianPackage: `postgresql-${postgresMajor}`,
    parts: ['local', 'tests'],
    probe: { file: `/usr/lib/postgresql/${postgresMajor}/bin/postgres` },
  },
  {
    name: 'pg_stat_statements',
    purpose: 'query statistics the exporter reads',
    debianPackage: 'postgresql-contrib',
    parts: ['local', 'tests'],
    probe: { file: `/usr/lib/postgresql/${postgresMajor}/lib/pg_stat_statements.so` },
  },
  {
    name: 'pgbackrest',
    purpose: 'WAL archive, backups and restores (restore_command of every replica)',
    debianPackage: 'pgbackrest',
    parts: ['local', 'tests'],
    probe: { program: 'pgbackrest' },
  },
  { name: 'pgbouncer', purpose: 'the pooler pods', debianPackage: 'pgbouncer', parts: ['local', 'tests'], probe: { program: 'pgbouncer' } },
  {
    name: 'mount',
    purpose: 'claims with a real size (a tmpfs per volume, as root)',
    debianPackage: 'mount',
    parts: ['local', 'tests'],
    probe: { program: 'mount' },
  },
  { name: 'ip', purpose: 'pod network namespaces and links', debianPackage: 'iproute2', parts: ['network', 'tests'], probe: { program: 'ip' } },
  { name: 'nsenter', purpose: 'entering pod network namespaces', debianPackage: 'util-linux', parts: ['network', 'tests'], probe: { program: 'nsenter' } },
  { name: 'nft', purpose: 'Service routing and partitions between pods', debianPackage: 'nftables', parts: ['network', 'tests'], probe: { program: 'nft' } },
  { name: 'redis-server', purpose: "the admin backend's cache in tests", debianPackage: 'redis-server', parts: ['tests'], probe: { program: 'redis-server' } },
  { name: 'kubectl', purpose: 'the CLI the stand-in is tested with', debianPackage: 'kubernetes-client', parts: ['tests'], probe: { program: 'kubectl' } },
  { name: 'promtool', purpose: 'checks and unit-tests the alert rules', debianPackage: 'prometheus', parts: ['tests'], probe: { program: 'promtool' } },
  { name: 'unzip', purpose: 'takes helm out of its npm package', debianPackage: 'unzip', parts: ['tests'], probe: { program: 'unzip' } },
  { name: 'openssl', purpose: 'certificates in the TLS tests', debianPackage: 'openssl', parts: ['tests'], probe: { program: 'openssl' } },
  { name: 'go', purpose: 'builds the real kube-apiserver', debianPackage: 'golang-go', parts: ['oracle'], probe: { program: 'go' } },
  { name: 'rsync', purpose: 'the kube-apiserver build', debianPackage: 'rsync', parts: ['oracle'], probe: { program: 'rsync' } },
  {
    name: 'reflect2',
    purpose: 'a Go module the kube-apiserver build vendors',
    debianPackage: 'golang-github-modern-go-reflect2-dev',
    parts: ['oracle'],
    probe: { file: '/usr/share/gocode/src/github.com/modern-go/reflect2/reflect2.go' },
  },
  { name: 'etcd', purpose: "the real kube-apiserver's store", debianPackage: 'etcd-server', parts: ['oracle'], probe: { file: '/usr/bin/etcd' } },
];

/** Packages whose services Debian starts on install; the tests and pods start their own. */
export const packagedServices: readonly string[] = ['postgresql', 'redis-server', 'pgbouncer', 'prometheus', 'prometheus-node-exporter', 'etcd'];

/** The requirements of the given parts, each once, in the list's order. */
export function requirementsFor(wanted: readonly Part[]): Requirement[] {
  return requirements.filter((r) => r.parts.some((p) => wanted.includes(p)));
}

export function parsePart(value: string): Part {
  const part = parts.find((p) => p === value);
  if (!part) throw new Error(`unknown part "${value}" (one of ${parts.join(', ')})`);
  return part;
}
