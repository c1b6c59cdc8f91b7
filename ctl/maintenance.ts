import * as k8s from '@kubernetes/client-node';
import { describeApiError, loadKubeConfig } from '../lib/kube/client.js';
import { Label, leaseName } from '../sidecar/ha-node/dcs/lease-codec.js';
import { apiBase, callMember, OperationError, UnreachableError } from './client.js';
import { confirmed, CtlExit, load, report, UsageError, type CtlContext } from './context.js';
import { leaderOf, memberNamed } from './discovery.js';

/** `flush` (cancel what is scheduled) and `remove` (wipe a cluster's DCS state). */

export interface FlushOptions {
  role?: string;
  force?: boolean;
}

/** `flush restart [members...]` cancels scheduled restarts; `flush switchover` the scheduled switchover. */
export async function flushCommand(ctx: CtlContext, what: string, names: string[], options: FlushOptions): Promise<number> {
  if (what !== 'restart' && what !== 'switchover') throw new UsageError(`flush what? "restart" or "switchover", not "${what}"`);
  const { cluster, via } = await load(ctx);
  if (what === 'switchover') {
    if (names.length > 0) throw new UsageError('flush switchover takes no member names');
    if (!cluster.scheduled_switchover) {
      ctx.out('No scheduled switchover\n');
      return CtlExit.ok;
    }
    await confirmed(ctx, options.force, `Cancel the switchover scheduled at ${cluster.scheduled_switchover.at}?`);
    const leader = leaderOf(cluster);
    const reply = await callMember(leader ? apiBase(leader.api_url) : via, 'DELETE', '/switchover', undefined, ctx.client);
    return report(ctx, [{ member: 'switchover', reply }]);
  }
  let members = names.length > 0 ? names.map((n) => memberNamed(cluster, n)) : [...cluster.members];
  if (options.role === 'leader' || options.role === 'primary') members = members.filter((m) => m.role === 'leader');
  else if (options.role === 'replica') members = members.filter((m) => m.role !== 'leader');
  const scheduled = [];
  for (const member of members) {
    const reply = await callMember(apiBase(member.api_url), 'GET', '/restart', undefined, ctx.client);
    if (reply.status === 200) scheduled.push(member);
  }
  if (scheduled.length === 0) {
    ctx.out('No scheduled restart\n');
    return CtlExit.ok;
  }
  await confirmed(ctx, options.force, `Cancel the scheduled restart of ${scheduled.map((m) => m.name).join(', ')}?`);
  const results = [];
  for (const member of scheduled)
    results.push({ member: member.name, reply: await callMember(apiBase(member.api_url), 'DELETE', '/restart', undefined, ctx.client) });
  return report(ctx, results);
}

const awareness = 'Yes I am aware';

async function typed(ctx: CtlContext, question: string, expected: string, mismatch: string): Promise<void> {
  const answer = await ctx.ask(question);
  if (answer === undefined) throw new UsageError('refusing to remove without a typed confirmation: nothing to read it from');
  if (answer.trim() !== expected) throw new OperationError(0, mismatch);
}

function leaseHeld(lease: k8s.V1Lease | undefined, now: number): string | undefined {
  const holder = lease?.spec?.holderIdentity;
  const renewed = lease?.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : NaN;
  const duration = lease?.spec?.leaseDurationSeconds ?? 0;
  return holder && Number.isFinite(renewed) && renewed + duration * 1000 > now ? holder : undefined;
}

/**
 * `remove`: deletes every DCS Lease of the cluster (leader, config with its history, failover,
 * sync, members) after the user types the cluster's name, an acknowledgement and, while a leader
 * holds the lock, the leader's name. Running members write their Leases again: stop them first.
 */
export async function removeCommand(ctx: CtlContext): Promise<number> {
  const { scope, namespace, urls } = ctx.target;
  if (urls.length > 0 || !scope) throw new UsageError("remove works on the cluster's Leases: give --cluster (and --namespace), not --url");
  const api = loadKubeConfig({ kubeconfig: ctx.target.kubeconfig }).makeApiClient(k8s.CoordinationV1Api);
  let leases: k8s.V1Lease[];
  try {
    leases = (await api.listNamespacedLease({ namespace, labelSelector: `${Label.cluster}=${scope},${Label.dcsKey}` })).items;
  } catch (error) {
    throw new UnreachableError(`cannot list the cluster's Leases: ${describeApiError(error)}`);
  }
  if (leases.length === 0) throw new OperationError(0, `cluster "${scope}" has no DCS state in namespace ${namespace}`);
  await typed(ctx, 'Please confirm the cluster name to remove:', scope, 'Cluster names specified do not match');
  await typed(
    ctx,
    `You are about to remove all information in the DCS for ${scope}, please type: "${awareness}":`,
    awareness,
    'You did not exactly type "Yes I am aware"',
  );
  const leader = leaseHeld(
    leases.find((l) => l.metadata?.name === leaseName(scope, 'leader')),
    Date.now(),
  );
  if (leader)
    await typed(
      ctx,
      'This cluster currently is healthy. Please specify the leader name to continue:',
      leader,
      'You did not specify the current leader of the cluster',
    );
  for (const lease of leases) {
    try {
      await api.deleteNamespacedLease({ name: lease.metadata!.name!, namespace });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw new OperationError(0, `cannot delete Lease ${lease.metadata!.name!}: ${describeApiError(error)}`);
    }
  }
  ctx.out(`Removed the DCS state of cluster ${scope}: ${leases.length} Leases\n`);
  return CtlExit.ok;
}
