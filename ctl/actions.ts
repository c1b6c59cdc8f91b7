import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergePatch, type JsonObject } from '../sidecar/ha-node/ops/config-merge.js';
import { apiBase, callMember, jsonOf, OperationError } from './client.js';
import { fromYaml, lineDiff, patchBetween, patchFromSets, toYaml } from './config-edit.js';
import { CtlExit, confirmed, load, report, UsageError, type CtlContext } from './context.js';
import { leaderOf, memberNamed, type ClusterDocument } from './discovery.js';
import { machine, renderHistory, type HistoryRow } from './render.js';

export { CtlExit, UsageError, type CtlContext } from './context.js';
export { listCommand } from './list-command.js';
export { dsnCommand, queryCommand } from './query.js';
export { flushCommand, removeCommand } from './maintenance.js';

export async function historyCommand(ctx: CtlContext): Promise<number> {
  const { via } = await load(ctx);
  const history = jsonOf<HistoryRow[]>(await callMember(via, 'GET', '/history', undefined, ctx.client), 'GET /history');
  ctx.out(ctx.format === 'table' ? renderHistory(history) : machine(history, ctx.format));
  return CtlExit.ok;
}

async function readConfig(ctx: CtlContext, via: string): Promise<JsonObject> {
  return jsonOf<JsonObject>(await callMember(via, 'GET', '/config', undefined, ctx.client), 'GET /config');
}

export async function showConfigCommand(ctx: CtlContext): Promise<number> {
  const { via } = await load(ctx);
  const config = await readConfig(ctx, via);
  ctx.out(ctx.format === 'json' ? machine(config, 'json') : toYaml(config));
  return CtlExit.ok;
}

export interface EditConfigOptions {
  set: string[];
  force?: boolean;
  /** Editor command; default $VISUAL, $EDITOR, then vi. */
  editor?: string;
}

export async function editConfigCommand(ctx: CtlContext, options: EditConfigOptions): Promise<number> {
  const { cluster, via } = await load(ctx);
  const before = await readConfig(ctx, via);
  const after = options.set.length > 0 ? mergePatch(before, patchFromSets(options.set)) : editInEditor(before, options.editor);
  const patch = patchBetween(before, after);
  if (Object.keys(patch).length === 0) {
    ctx.out('Not changed\n');
    return CtlExit.ok;
  }
  if (ctx.format === 'table') ctx.out(lineDiff(toYaml(before), toYaml(after)));
  await confirmed(ctx, options.force, 'Apply these changes?');
  const target = leaderOf(cluster) ? apiBase(leaderOf(cluster)!.api_url) : via;
  const reply = await callMember(target, 'PATCH', '/config', patch, ctx.client);
  if (reply.status >= 300) return report(ctx, [{ member: 'config', reply }]);
  if (ctx.format === 'table') ctx.out('Configuration changed\n');
  else ctx.out(machine(JSON.parse(reply.text) as unknown, ctx.format));
  return CtlExit.ok;
}

function editInEditor(before: JsonObject, editor: string | undefined): JsonObject {
  const command = editor ?? process.env.VISUAL ?? process.env.EDITOR ?? 'vi';
  const dir = mkdtempSync(join(tmpdir(), 'keelson-config-'));
  const file = join(dir, 'config.yaml');
  try {
    writeFileSync(file, toYaml(before), { mode: 0o600 });
    // Through the shell so EDITOR may carry arguments ("code --wait").
    const result = spawnSync('/bin/sh', ['-c', `${command} "$1"`, 'editor', file], { stdio: 'inherit' });
    if (result.status !== 0) throw new OperationError(0, `the editor exited with status ${result.status ?? result.signal}`);
    return fromYaml(readFileSync(file, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function pauseCommand(ctx: CtlContext, pause: boolean): Promise<number> {
  const { cluster, via } = await load(ctx);
  // The pause flag lives in the dynamic configuration (GET /cluster need not show it).
  const current = (await readConfig(ctx, via)).pause === true;
  if (current === pause) {
    ctx.out(pause ? 'Cluster is already paused\n' : 'Cluster is not paused\n');
    return CtlExit.failed;
  }
  const target = leaderOf(cluster) ? apiBase(leaderOf(cluster)!.api_url) : via;
  const reply = await callMember(target, 'PATCH', '/config', { pause: pause ? true : null }, ctx.client);
  if (reply.status >= 300) return report(ctx, [{ member: 'config', reply }]);
  return report(ctx, [
    { member: 'cluster', reply: { status: reply.status, text: pause ? 'Success: cluster management is paused' : 'Success: cluster management is resumed' } },
  ]);
}

export interface SwitchoverOptions {
  leader?: string;
  candidate?: string;
  scheduled?: string;
  force?: boolean;
}

export async function switchoverCommand(ctx: CtlContext, action: 'switchover' | 'failover', options: SwitchoverOptions): Promise<number> {
  const { cluster } = await load(ctx);
  const leader = leaderOf(cluster);
  if (action === 'switchover' && !leader) throw new OperationError(0, 'This cluster has no leader; use failover');
  const from = action === 'switchover' ? (options.leader ?? leader!.name) : options.leader;
  if (from && leader && from !== leader.name) throw new OperationError(0, `Member ${from} is not the leader of the cluster`);
  if (options.candidate) memberNamed(cluster, options.candidate);
  const body: Record<string, string> = {};
  if (from) body.leader = from;
  if (options.candidate) body.candidate = options.candidate;
  if (options.scheduled && options.scheduled !== 'now') body.scheduled_at = options.scheduled;
  const what = `${action === 'switchover' ? 'Switch over' : 'Fail over'}${from ? ` from ${from}` : ''} to ${options.candidate ?? 'the best replica'}${body.scheduled_at ? ` at ${body.scheduled_at}` : ' now'}?`;
  await confirmed(ctx, options.force, what);
  const target = leader ? apiBase(leader.api_url) : apiBase(memberNamed(cluster, options.candidate!).api_url);
  const reply = await callMember(target, 'POST', action === 'switchover' ? '/switchover' : '/failover', body, {
    ...ctx.client,
    timeoutMs: Math.max(ctx.client.timeoutMs, 65_000),
  });
  return report(ctx, [{ member: target, reply }]);
}

export interface RestartOptions {
  role?: string;
  pending?: boolean;
  pgVersion?: string;
  timeout?: string;
  scheduled?: string;
  force?: boolean;
}

function selectMembers(cluster: ClusterDocument, names: string[], role?: string): ClusterDocument['members'] {
  const chosen = names.length > 0 ? names.map((n) => memberNamed(cluster, n)) : [...cluster.members];
  if (role === 'primary' || role === 'leader') return chosen.filter((m) => m.role === 'leader');
  if (role === 'replica') return chosen.filter((m) => m.role !== 'leader');
  return chosen;
}

export async function restartCommand(ctx: CtlContext, names: string[], options: RestartOptions): Promise<number> {
  const { cluster } = await load(ctx);
  const members = selectMembers(cluster, names);
  const body: Record<string, unknown> = {};
  if (options.role && options.role !== 'any') body.role = options.role === 'leader' ? 'primary' : options.role;
  if (options.pending) body.restart_pending = true;
  if (options.pgVersion) body.db_version = options.pgVersion;
  if (options.timeout) body.timeout = options.timeout;
  if (options.scheduled && options.scheduled !== 'now') body.schedule = options.scheduled;
  await confirmed(ctx, options.force, `Restart ${members.map((m) => m.name).join(', ')}${body.schedule ? ` at ${String(body.schedule)}` : ''}?`);
  const results = [];
  for (const member of members)
    results.push({
      member: member.name,
      reply: await callMember(apiBase(member.api_url), 'POST', '/restart', body, { ...ctx.client, timeoutMs: Math.max(ctx.client.timeoutMs, 120_000) }),
    });
  return report(ctx, results);
}

export async function reloadCommand(ctx: CtlContext, names: string[], force?: boolean): Promise<number> {
  const { cluster } = await load(ctx);
  const members = selectMembers(cluster, names);
  await confirmed(ctx, force, `Reload ${members.map((m) => m.name).join(', ')}?`);
  const results = [];
  for (const member of members)
    results.push({ member: member.name, reply: await callMember(apiBase(member.api_url), 'POST', '/reload', undefined, ctx.client) });
  return report(ctx, results);
}

export async function reinitCommand(ctx: CtlContext, names: string[], options: { force?: boolean; fromLeader?: boolean }): Promise<number> {
  if (names.length === 0) throw new UsageError('name the member(s) to reinitialize');
  const { cluster } = await load(ctx);
  const members = names.map((n) => memberNamed(cluster, n));
  await confirmed(ctx, options.force, `Reinitialize ${names.join(', ')}? Their data directories will be deleted`);
  const body = { force: Boolean(options.force), 'from-leader': Boolean(options.fromLeader) };
  const results = [];
  for (const member of members)
    results.push({ member: member.name, reply: await callMember(apiBase(member.api_url), 'POST', '/reinitialize', body, ctx.client) });
  return report(ctx, results);
}
