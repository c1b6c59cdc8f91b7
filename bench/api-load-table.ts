/**
 * Pure parts of the API load benchmark: naming a request by verb and resource, and the printed
 * tables (per cluster next to Patroni's figures, per member, per verb/resource).
 */

export interface Setting {
  ttl: number;
  loopWait: number;
}

export interface LoadTally {
  /** "VERB resource" → count. */
  requests: Map<string, number>;
  /** "VERB resource name" → count, for requests naming one object (reads and writes, not watches). */
  objects: Map<string, number>;
  /** Requests that arrived on a connection not seen before (a new TCP/TLS handshake). */
  connections: number;
}

export const emptyTally = (): LoadTally => ({ requests: new Map(), objects: new Map(), connections: 0 });

/** Patroni on Kubernetes at these settings, from its code (watch caches; member writes only on change). */
const patroni: Record<string, string> = {
  '30/10': '≈0 reads, 0.1 writes/s idle … 0.4 busy',
  '10/2': '≈0 reads, 0.5 … 2.0 writes/s',
};

const verbs: Record<string, string> = { POST: 'CREATE', PUT: 'UPDATE', PATCH: 'PATCH', DELETE: 'DELETE' };

/** "LIST leases", "UPDATE leases", "WATCH pods", "GET pods/status" …, and the object named, if any. */
export function classifyRequest(method: string, url: string): string {
  return requestParts(method, url).key;
}

/** "UPDATE leases load-leader" for a request naming one object; undefined for lists and watches. */
export function classifyObject(method: string, url: string): string | undefined {
  const { key, name } = requestParts(method, url);
  return name && !isWatch(key) ? `${key} ${name}` : undefined;
}

function requestParts(method: string, url: string): { key: string; name?: string } {
  const parsed = new URL(url, 'http://stand-in');
  const parts = parsed.pathname.split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource = parsed.pathname, name, sub] = rest;
  const watch = parsed.searchParams.get('watch');
  const verb = method === 'GET' ? (watch === 'true' || watch === '1' ? 'WATCH' : name ? 'GET' : 'LIST') : (verbs[method] ?? method);
  return { key: `${verb} ${sub ? `${resource}/${sub}` : resource}`, name };
}

const isWrite = (key: string): boolean => !/^(GET|LIST|WATCH) /.test(key);
const isWatch = (key: string): boolean => key.startsWith('WATCH ');

function sums(tally: LoadTally): { requests: number; writes: number; watches: number } {
  let requests = 0;
  let writes = 0;
  let watches = 0;
  for (const [key, count] of tally.requests) {
    if (isWatch(key)) watches += count;
    else requests += count;
    if (isWrite(key)) writes += count;
  }
  return { requests, writes, watches };
}

const rate = (count: number, seconds: number): string => (count / seconds).toFixed(3);

export interface LoadResult {
  setting: Setting;
  tallies: Map<string, LoadTally>;
  /** "lease: what changed" → count, from a watch on the cluster's Leases. */
  changes: Map<string, number>;
  /** Lease (other than the leader) → seconds into the count at which it changed. */
  times: Map<string, number[]>;
}

export function formatLoad(results: LoadResult[], seconds: number): string {
  const lines: string[] = [];
  lines.push(`\nha-node API load per 3-member cluster at steady state (${seconds} s; requests exclude watch opens)`);
  lines.push('| ttl / loop_wait | req/s | writes/s | watch opens/s | new connections/s | Patroni on Kubernetes |');
  lines.push('|---|---|---|---|---|---|');
  for (const { setting, tallies } of results) {
    const members = [...tallies.entries()].filter(([client]) => client !== 'other');
    const total = members.reduce(
      (acc, [, t]) => {
        const s = sums(t);
        return {
          requests: acc.requests + s.requests,
          writes: acc.writes + s.writes,
          watches: acc.watches + s.watches,
          connections: acc.connections + t.connections,
        };
      },
      { requests: 0, writes: 0, watches: 0, connections: 0 },
    );
    const key = `${setting.ttl}/${setting.loopWait}`;
    lines.push(
      `| ${key} | ${rate(total.requests, seconds)} | ${rate(total.writes, seconds)} | ${rate(total.watches, seconds)} | ${rate(total.connections, seconds)} | ${patroni[key] ?? '-'} |`,
    );
  }
  for (const { setting, tallies } of results) {
    lines.push(`\nttl ${setting.ttl} / loop_wait ${setting.loopWait}: per client (/s)`);
    lines.push('| client | req/s | writes/s | new connections/s | by verb and resource (/s) |');
    lines.push('|---|---|---|---|---|');
    for (const [client, tally] of [...tallies.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const s = sums(tally);
      const detail = [...tally.requests.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => `${k} ${rate(n, seconds)}`)
        .join(', ');
      lines.push(`| ${client} | ${rate(s.requests, seconds)} | ${rate(s.writes, seconds)} | ${rate(tally.connections, seconds)} | ${detail} |`);
    }
  }
  for (const { setting, tallies, changes, times } of results) {
    lines.push(`\nttl ${setting.ttl} / loop_wait ${setting.loopWait}: requests naming one object, by client (count in ${seconds} s)`);
    lines.push('| client | request | count |');
    lines.push('|---|---|---|');
    for (const [client, tally] of [...tallies.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      for (const [key, count] of [...tally.objects.entries()].sort(([a], [b]) => a.localeCompare(b))) lines.push(`| ${client} | ${key} | ${count} |`);
    }
    lines.push(`\nttl ${setting.ttl} / loop_wait ${setting.loopWait}: what each new Lease version changed (count in ${seconds} s)`);
    lines.push('| lease: changed fields | count |');
    lines.push('|---|---|');
    for (const [key, count] of [...changes.entries()].sort(([a], [b]) => a.localeCompare(b))) lines.push(`| ${key} | ${count} |`);
    for (const [lease, at] of [...times.entries()].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`${lease} changed at ${at.map((t) => `${t} s`).join(', ')}`);
  }
  lines.push('\n"other" is the benchmark harness (its kubelet stand-in), not counted in the cluster figures.');
  return lines.join('\n');
}
