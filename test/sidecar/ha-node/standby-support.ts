import type { Member, TestCluster } from './harness.js';

/** Credentials of the ha-node API in the standby tests, and calls they share. */
export const standbyApiEnv = { KEELSON_API_USERNAME: 'sb-admin', KEELSON_API_PASSWORD: 'sb-password' };
const auth = `Basic ${Buffer.from(`${standbyApiEnv.KEELSON_API_USERNAME}:${standbyApiEnv.KEELSON_API_PASSWORD}`).toString('base64')}`;

export async function patchConfig(member: Member, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${member.apiUrl}/config`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json', Authorization: auth },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, text: await response.text() };
}

/** One sample of an ha_* metric of the member (undefined when absent). */
export async function metric(member: Member, name: string): Promise<number | undefined> {
  const text = (await member.get('/metrics')).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** The member answering /standby-leader with 200 (fails when several do). */
export async function standbyLeaderOf(members: Member[]): Promise<Member | undefined> {
  const codes = await Promise.all(members.map((m) => m.status('/standby-leader')));
  const leaders = members.filter((_, i) => codes[i] === 200);
  if (leaders.length > 1) throw new Error(`two standby leaders: ${leaders.map((m) => m.name).join(', ')}`);
  return leaders[0];
}

/** The end of the WAL the member has replayed (standby) or written (primary), in bytes. */
export async function walPosition(member: Member): Promise<number> {
  const rows = await member.query<{ lsn: string }>("SELECT pg_wal_lsn_diff(COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn()), '0/0')::text AS lsn");
  return Number(rows[0]?.lsn);
}

/** What the demoted primary publishes in its node document (`standby_demotion`). */
export interface Demotion {
  database_system_identifier: string;
  timeline: number;
  checkpoint_location: number;
  at: string;
}

/**
 * The controlled swap: `from` (a primary) becomes a standby of `to` (a standby leader of `from`'s
 * cluster), which promotes once it has replayed past the shutdown checkpoint `from` published.
 * The demotion is published as soon as `from` has stopped: `to` need not wait for its restart.
 */
export async function controlledSwap(from: Member, to: Member, waitFor: TestCluster['waitFor']): Promise<Demotion> {
  const asked = Date.now();
  const demote = await patchConfig(from, { standby_cluster: { host: to.ip, port: to.pgPort } });
  if (demote.status !== 200) throw new Error(`demotion refused: ${demote.text}`);
  const demotion = await waitFor(
    `${from.name} demoted`,
    async () => {
      const found = (await from.get('/ha')).json().standby_demotion as Demotion | undefined;
      return found && Date.parse(found.at) >= asked - 1000 ? found : undefined;
    },
    60_000,
  );
  await waitFor(`${to.name} replayed past the shutdown checkpoint of ${from.name}`, async () => (await walPosition(to)) > demotion.checkpoint_location, 60_000);
  const promote = await patchConfig(to, { standby_cluster: null });
  if (promote.status !== 200) throw new Error(`promotion refused: ${promote.text}`);
  await waitFor(`${to.name} writable`, () => to.isWritable(), 60_000);
  return demotion;
}
