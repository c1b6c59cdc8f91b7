import type { Collector } from '../config/types.js';

/** What the precheck learned about one server, plus how the exporter was started. */
export interface ServerFacts {
  /** server_version_num; 0 while unknown (the version check is then skipped). */
  version: number;
  inRecovery: boolean;
  datname: string;
  username: string;
  databases: string[];
  schemas: string[];
  extensions: string[];
  /** An auto-discovered database rather than the main URL. */
  forked: boolean;
  /** pgbouncer admin console mode (URL database "pgbouncer"). */
  pgbouncer: boolean;
  /** Tags given with --tag. */
  serverTags: string[];
}

export interface PlanDecision {
  collector: Collector;
  installed: boolean;
  /** Why it was left out; undefined when installed. */
  reason?: string;
}

/** Why a collector does not apply to a server, or undefined when it does (pg_exporter's rules, in its order). */
export function incompatibility(collector: Collector, facts: ServerFacts): string | undefined {
  if (collector.skip) return 'skip';
  const tagged = collector.tags.includes('pgbouncer');
  if (tagged !== facts.pgbouncer) return tagged ? 'pgbouncer only' : 'not for pgbouncer';
  if (facts.version > 0) {
    if (collector.minVersion > 0 && facts.version < collector.minVersion) return `version ${facts.version} < min_version ${collector.minVersion}`;
    if (collector.maxVersion > 0 && facts.version >= collector.maxVersion) return `version ${facts.version} >= max_version ${collector.maxVersion}`;
  }
  for (const tag of collector.tags) {
    const problem = tagProblem(tag, facts);
    if (problem) return problem;
  }
  return undefined;
}

function tagProblem(tag: string, facts: ServerFacts): string | undefined {
  switch (tag) {
    case 'cluster':
      return facts.forked ? 'cluster collector on a discovered database' : undefined;
    case 'primary':
    case 'master':
    case 'leader':
      return facts.inRecovery ? 'primary only' : undefined;
    case 'standby':
    case 'replica':
    case 'slave':
      return facts.inRecovery ? undefined : 'replica only';
    case 'pgbouncer':
      return undefined;
  }
  const colon = tag.indexOf(':');
  if (colon > 0) {
    const kind = tag.slice(0, colon);
    const value = tag.slice(colon + 1);
    switch (kind) {
      case 'extension':
        return facts.extensions.includes(value) ? undefined : `extension ${value} missing`;
      case 'schema':
        return facts.schemas.includes(value) ? undefined : `schema ${value} missing`;
      case 'dbname':
        return facts.datname === value ? undefined : `database is not ${value}`;
      case 'username':
        return facts.username === value ? undefined : `user is not ${value}`;
      case 'not':
        return facts.serverTags.includes(value) ? `started with --tag ${value}` : undefined;
    }
  }
  return facts.serverTags.includes(tag) ? undefined : `needs --tag ${tag}`;
}

/** Order of execution and /explain: fatal first, then priority, then branch name for a stable order. */
export function compareCollectors(a: Collector, b: Collector): number {
  if (a.fatal !== b.fatal) return a.fatal ? -1 : 1;
  if (a.priority !== b.priority) return a.priority - b.priority;
  return a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0;
}

/** Decides every collector for one server; the installed ones come back sorted for execution. */
export function planCollectors(collectors: Collector[], facts: ServerFacts): { installed: Collector[]; decisions: PlanDecision[] } {
  const decisions = collectors.map((collector) => {
    const reason = incompatibility(collector, facts);
    return reason === undefined ? { collector, installed: true } : { collector, installed: false, reason };
  });
  const installed = decisions
    .filter((d) => d.installed)
    .map((d) => d.collector)
    .sort(compareCollectors);
  return { installed, decisions };
}
