import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterView, MemberRecord } from '../../../../sidecar/ha-node/dcs/types.js';
import type { PeerReport } from '../../../../sidecar/ha-node/ha/election/election.js';
import { authorizationHeader, checkAuthorization, loadApiCredentials } from '../../../../api/ha-node/credentials.js';
import { mergePatch, sameDocument, withoutNulls } from '../../../../sidecar/ha-node/ops/config-merge.js';
import { describeProblems, validateDynamicConfig } from '../../../../sidecar/ha-node/ops/config-validate.js';
import { candidatePool, chooseCandidate, ineligibility, synchronousModeOf, type EligibilityConfig } from '../../../../sidecar/ha-node/ops/eligibility.js';
import { failoverOutcome, outcomeTimeoutSeconds, statusUnknown } from '../../../../sidecar/ha-node/ops/failover-outcome.js';
import { parseFailoverRequest, type FailoverRequest } from '../../../../sidecar/ha-node/ops/failover-request.js';
import { isPaused, manualFailoverTiming, pendingRestartFrom, raceAllowed } from '../../../../sidecar/ha-node/ops/loop-decisions.js';
import { parseRestartRequest, parseSeconds, parseServerVersion, restartConditionsMet } from '../../../../sidecar/ha-node/ops/restart-request.js';
import { parseSchedule, restartScheduleTexts } from '../../../../sidecar/ha-node/ops/schedule.js';
import { namesIn, planSyncStandbys, strictPlaceholder } from '../../../../sidecar/ha-node/ops/sync-names.js';

const now = new Date('2026-11-22T10:00:00Z');

/** Merge results are null-prototype objects; compare their JSON content. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('PATCH merge semantics', () => {
  it('merges nested objects, null removes keys at any depth, scalars replace', () => {
    const stored = { ttl: 30, loop_wait: 10, db: { use_slots: true, parameters: { max_connections: 100, work_mem: '4MB' } } };
    const merged = mergePatch(stored, { ttl: 40, loop_wait: null, db: { parameters: { work_mem: null, shared_buffers: '64MB' } } });
    assert.deepEqual(plain(merged), { ttl: 40, db: { use_slots: true, parameters: { max_connections: 100, shared_buffers: '64MB' } } });
    assert.equal(stored.loop_wait, 10, 'the stored document is not mutated');
    assert.equal(stored.db.parameters.work_mem, '4MB');
  });
  it('an object replaces a scalar, a scalar replaces an object, arrays replace whole', () => {
    assert.deepEqual(plain(mergePatch({ a: 1, b: { c: 1 }, d: [1, 2] }, { a: { x: 1 }, b: 2, d: [3] })), { a: { x: 1 }, b: 2, d: [3] });
  });
  it('removing a missing key is a no-op; withoutNulls drops nulls of a PUT body', () => {
    assert.deepEqual(plain(mergePatch({ a: 1 }, { z: null })), { a: 1 });
    assert.deepEqual(plain(withoutNulls({ a: null, b: { c: null, d: 1 } })), { b: { d: 1 } });
  });
  it('compares documents regardless of key order', () => {
    assert.equal(sameDocument({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }), true);
    assert.equal(sameDocument({ a: 1 }, { a: '1' }), false);
  });
});

describe('dynamic configuration validation', () => {
  const valid = { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 1048576, db: { use_slots: true, parameters: { max_connections: 101 } } };
  it('accepts a valid document', () => {
    assert.deepEqual(validateDynamicConfig(valid), []);
  });
  it('names the field of a wrong type (string ttl) and of a negative loop_wait', () => {
    const ttl = validateDynamicConfig({ ...valid, ttl: 'abc' });
    assert.equal(ttl[0]?.field, 'ttl');
    assert.match(describeProblems(ttl), /"ttl" must be an integer from 5 to 3600 \(got "abc"\)/);
    const loop = validateDynamicConfig({ ...valid, loop_wait: -5 });
    assert.equal(loop[0]?.field, 'loop_wait');
    assert.match(describeProblems(loop), /"loop_wait" must be an integer from 1 to 600/);
  });
  it('refuses unknown keys, nested too, and bad parameter values', () => {
    assert.equal(validateDynamicConfig({ tll: 30 })[0]?.field, 'tll');
    assert.equal(validateDynamicConfig({ db: { use_slot: true } })[0]?.field, 'db.use_slot');
    assert.equal(validateDynamicConfig({ db: { parameters: { max_connections: { a: 1 } } } })[0]?.field, 'db.parameters.max_connections');
    assert.equal(validateDynamicConfig({ db: { parameters: { port: 5433 } } })[0]?.field, 'db.parameters.port');
    assert.equal(validateDynamicConfig({ db: { parameters: { 'bad name': 1 } } })[0]?.field, 'db.parameters.bad name');
    assert.equal(validateDynamicConfig({ synchronous_mode: 'maybe' })[0]?.field, 'synchronous_mode');
    assert.equal(validateDynamicConfig({ synchronous_node_count: 0 })[0]?.field, 'synchronous_node_count');
    assert.equal(validateDynamicConfig({ pause: 'yes' })[0]?.field, 'pause');
    assert.deepEqual(validateDynamicConfig({ synchronous_mode: 'quorum', synchronous_node_count: 2, pause: true }), []);
  });
  it('enforces loop_wait + 2*retry_timeout <= ttl and names the key the patch changed', () => {
    const merged = { ttl: 20, loop_wait: 10, retry_timeout: 10 };
    assert.equal(validateDynamicConfig(merged, { ttl: 20 })[0]?.field, 'ttl');
    assert.equal(validateDynamicConfig(merged, { retry_timeout: 10 })[0]?.field, 'retry_timeout');
    assert.equal(validateDynamicConfig(merged, { loop_wait: 10, ttl: 20 })[0]?.field, 'loop_wait');
    assert.match(describeProblems(validateDynamicConfig(merged, { ttl: 20 })), /loop_wait \+ 2\*retry_timeout <= ttl \(10 \+ 2\*10 > 20\)/);
    assert.deepEqual(validateDynamicConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 }), []);
    // defaults (30/10/10) count for missing keys
    assert.equal(validateDynamicConfig({ ttl: 25 })[0]?.field, 'ttl');
  });
});

describe('pg_hba lines on a member that requires TLS', () => {
  const lines = (pg_hba: string[], parameters: Record<string, unknown> = {}) => ({ db: { parameters, pg_hba } });
  const onTlsMember = (doc: ReturnType<typeof lines>, patch: object = doc) => validateDynamicConfig(doc, patch as never, { requireTls: true });
  it('refuses what would let a remote client in without TLS, or without authentication, as the CRD does', () => {
    for (const line of ['hostnossl all all 0.0.0.0/0 scram-sha-256', 'host all all 10.0.0.0/8 trust', 'hostgssenc all all 0.0.0.0/0 scram-sha-256']) {
      const problems = onTlsMember(lines([line]));
      assert.equal(problems[0]?.field, 'db.pg_hba[0]', line);
      assert.match(describeProblems(problems), /TLS|trusts a remote address/, line);
    }
  });
  it('accepts hostssl without ssl among the parameters (the member serves TLS), and password rules over TLS', () => {
    assert.deepEqual(onTlsMember(lines(['hostssl all all 0.0.0.0/0 scram-sha-256', 'host app app 10.0.0.0/8 scram-sha-256', 'local all all trust'])), []);
    assert.equal(validateDynamicConfig(lines(['hostssl all all 0.0.0.0/0 scram-sha-256']))[0]?.field, 'db.pg_hba[0]', 'without TLS hostssl needs ssl = on');
  });
  it('applies only to lines the request sends, and not once ssl is turned off', () => {
    const stored = lines(['host all all 10.0.0.0/8 trust']);
    assert.deepEqual(onTlsMember(stored, { ttl: 30 }), [], 'a stored line does not block every PATCH');
    assert.deepEqual(onTlsMember(lines(['host all all 10.0.0.0/8 trust'], { ssl: 'off' })), []);
    assert.deepEqual(validateDynamicConfig(stored), [], 'a member without TLS keeps the plain rules');
  });
});

describe('schedule parsing', () => {
  it('accepts ISO 8601 with Z or an offset and normalises to UTC', () => {
    const result = parseSchedule('2026-11-22T12:30:00+02:00', now);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.iso, '2026-11-22T10:30:00+00:00');
    const z = parseSchedule('2026-11-22T10:05:00.123Z', now);
    assert.ok(z.ok && z.at.getTime() === Date.parse('2026-11-22T10:05:00.123Z'), JSON.stringify(z));
    // Milliseconds stay: a stored time rounded down would let the switchover run early.
    assert.equal(z.ok && z.iso, '2026-11-22T10:05:00.123+00:00');
    assert.ok(parseSchedule('2026-11-22 11:00+0100', now).ok, 'parses with a +hhmm offset');
  });
  it('400 without timezone, 422 in the past, 422 unparseable', () => {
    assert.deepEqual(parseSchedule('2026-11-22T11:00:00', now), {
      ok: false,
      code: 400,
      message: 'Timezone information is mandatory for the scheduled switchover',
    });
    assert.deepEqual(parseSchedule('2026-11-22T09:00:00Z', now), { ok: false, code: 422, message: 'Cannot schedule switchover in the past' });
    for (const bad of ['tomorrow', '2026-13-01T00:00:00Z', '2026-11-22T25:00:00Z', 42]) {
      const r = parseSchedule(bad, now);
      assert.ok(!r.ok && r.code === 422 && r.message.startsWith('Unable to parse scheduled timestamp'), String(bad));
    }
    const restart = parseSchedule('2026-11-22T09:00:00Z', now, restartScheduleTexts);
    assert.ok(!restart.ok && restart.message === 'Cannot schedule restart in the past', JSON.stringify(restart));
  });
});

describe('switchover and failover request checks (Patroni order and texts)', () => {
  const parse = (endpoint: 'switchover' | 'failover', body: unknown, paused = false) => parseFailoverRequest(endpoint, body, paused, now);
  const failure = (r: ReturnType<typeof parse>): [number, string] => {
    assert.ok(!r.ok, 'expected a failure');
    return [r.reply.code, r.reply.text];
  };
  it('rejects non-objects and empty bodies with 400', () => {
    assert.equal(failure(parse('failover', {}))[0], 400);
    assert.equal(failure(parse('switchover', [1]))[0], 400);
    assert.equal(failure(parse('switchover', 'x'))[0], 400);
    assert.equal(failure(parse('switchover', { leader: 5 }))[0], 400);
  });
  it('each rule with its text', () => {
    assert.deepEqual(failure(parse('failover', { foo: 'bar' })), [400, 'Failover could be performed only to a specific candidate']);
    assert.deepEqual(failure(parse('switchover', { candidate: 'b' })), [400, 'Switchover could be performed only from a specific leader']);
    assert.deepEqual(failure(parse('failover', { candidate: 'b', scheduled_at: '2026-11-22T11:00:00Z' })), [400, "Failover can't be scheduled"]);
    assert.deepEqual(failure(parse('switchover', { leader: 'a', candidate: 'b', scheduled_at: '2026-11-22T11:00:00Z' }, true)), [
      400,
      "Can't schedule switchover in the paused state",
    ]);
    assert.deepEqual(failure(parse('switchover', { leader: 'a', scheduled_at: '2026-11-22T11:00:00' })), [
      400,
      'Timezone information is mandatory for the scheduled switchover',
    ]);
    assert.deepEqual(failure(parse('switchover', { leader: 'a', scheduled_at: '2026-11-22T09:00:00Z' })), [422, 'Cannot schedule switchover in the past']);
    assert.equal(failure(parse('switchover', { leader: 'a', scheduled_at: 'soon' }))[0], 422);
    assert.deepEqual(failure(parse('switchover', { leader: 'a' }, true)), [400, 'Switchover is possible only to a specific candidate in a paused state']);
    assert.deepEqual(failure(parse('switchover', { leader: 'a', candidate: 'a' })), [400, 'Switchover target and source are the same']);
  });
  it('failover with a leader becomes a switchover; member is an alias of candidate; pause allows a named candidate', () => {
    const r = parse('failover', { leader: 'a', member: 'b' });
    assert.ok(r.ok && r.request.action === 'switchover' && r.request.candidate === 'b', JSON.stringify(r));
    const paused = parse('switchover', { leader: 'a', candidate: 'b' }, true);
    assert.ok(paused.ok && paused.request.action === 'switchover', JSON.stringify(paused));
    const scheduled = parse('switchover', { leader: 'a', scheduled_at: '2026-11-22T10:30:00+00:00' });
    assert.ok(scheduled.ok && scheduled.request.scheduledAt?.iso === '2026-11-22T10:30:00+00:00', JSON.stringify(scheduled));
  });
});

function member(name: string, extra: Partial<MemberRecord> = {}): MemberRecord {
  return {
    name,
    conn_url: '',
    api_url: `http://127.0.0.1/${name}`,
    host: '127.0.0.1',
    port: 5432,
    role: 'replica',
    state: 'running',
    tags: {},
    version: '0',
    heartbeat: 0,
    ...extra,
  };
}

function clusterOf(leader: string | undefined, members: MemberRecord[], extra: Partial<ClusterView> = {}): ClusterView {
  const record = leader ? { holder: leader, ttl: 30, transitions: 0, optime: 5_000_000 } : undefined;
  return { leader: record, leaderRecord: record, history: [], members, ...extra };
}

const asyncConfig: EligibilityConfig = { synchronousMode: 'off', maximumLagOnFailover: 1_048_576, checkTimeline: false };
const peer = (name: string, extra: Partial<PeerReport> = {}): PeerReport => ({
  name,
  reachable: true,
  role: 'replica',
  state: 'running',
  walPosition: 5_000_000,
  timeline: 1,
  nofailover: false,
  ...extra,
});
const req = (r: Partial<FailoverRequest>): FailoverRequest => ({ action: 'switchover', ...r });

describe('eligibility (checks 1-6)', () => {
  const members = [member('a', { role: 'primary', xlog_location: 5_000_000 }), member('b'), member('c')];
  it('412 texts of the candidate pool', () => {
    const healthy = clusterOf('a', members);
    const text = (r: ReturnType<typeof candidatePool>) => (r.ok ? 'ok' : `${r.reply.code} ${r.reply.text}`);
    assert.equal(text(candidatePool(req({ leader: 'b' }), healthy, asyncConfig)), '412 leader name does not match');
    assert.equal(text(candidatePool(req({ leader: 'a' }), clusterOf(undefined, members), asyncConfig)), '412 leader name does not match');
    assert.equal(text(candidatePool(req({ leader: 'a', candidate: 'x' }), healthy, asyncConfig)), '412 candidate does not exists');
    assert.equal(
      text(candidatePool(req({ action: 'failover', candidate: 'a' }), healthy, asyncConfig)),
      '412 failover is not possible: a is already the leader',
    );
    assert.equal(
      text(candidatePool(req({ leader: 'a' }), clusterOf('a', [members[0]!]), asyncConfig)),
      '412 switchover is not possible: cluster does not have members except leader',
    );
    const sync = { ...asyncConfig, synchronousMode: 'on' as const };
    const syncCluster = clusterOf('a', members, { sync: { leader: 'a', sync_standby: ['c'] } });
    assert.equal(text(candidatePool(req({ leader: 'a', candidate: 'b' }), syncCluster, sync)), '412 candidate name does not match with sync_standby');
    assert.equal(text(candidatePool(req({ leader: 'a', candidate: 'c' }), syncCluster, sync)), 'ok');
    assert.equal(
      text(candidatePool(req({ leader: 'a' }), clusterOf('a', members, { sync: { leader: 'a', sync_standby: [] } }), sync)),
      '412 switchover is not possible: can not find sync_standby',
    );
    const pool = candidatePool(req({ leader: 'a' }), syncCluster, sync);
    assert.ok(pool.ok && pool.members.map((m) => m.name).join() === 'c', 'sync switchover without candidate: only sync members');
    // check 6 is skipped for a failover and in quorum mode
    assert.equal(text(candidatePool(req({ action: 'failover', candidate: 'b' }), syncCluster, sync)), 'ok');
    assert.equal(text(candidatePool(req({ leader: 'a', candidate: 'b' }), syncCluster, { ...sync, synchronousMode: 'quorum' })), 'ok');
  });
  it('refuses nofailover, unreachable, lagging and behind-timeline members while a leader exists', () => {
    const healthy = clusterOf('a', members, { history: [[1, 100, 'x', 't']] });
    assert.equal(ineligibility(peer('b', { nofailover: true }), healthy, asyncConfig), 'tagged nofailover');
    assert.equal(ineligibility(peer('b', { reachable: false }), healthy, asyncConfig), 'not reachable through its API');
    assert.match(ineligibility(peer('b', { walPosition: 1_000_000 }), healthy, asyncConfig) ?? '', /lags 4000000 bytes/);
    assert.equal(ineligibility(peer('b', { timeline: 1 }), healthy, asyncConfig), undefined);
    assert.match(
      ineligibility(peer('b', { timeline: 1 }), healthy, { ...asyncConfig, checkTimeline: true }) ?? '',
      /timeline 1 is behind the cluster timeline 2/,
    );
  });
  it('a leaderless failover accepts a lagging, behind, non-sync candidate but still refuses nofailover', () => {
    const leaderless = clusterOf(undefined, members, {
      history: [[1, 100, 'x', 't']],
      leaderRecord: { holder: '', ttl: 30, transitions: 1, optime: 9_000_000 },
    });
    const config = { ...asyncConfig, checkTimeline: true };
    assert.equal(ineligibility(peer('b', { walPosition: 1, timeline: 1 }), leaderless, config), undefined);
    assert.equal(ineligibility(peer('b', { nofailover: true }), leaderless, config), 'tagged nofailover');
    const sync = candidatePool(
      req({ action: 'failover', candidate: 'b' }),
      { ...leaderless, sync: { leader: 'a', sync_standby: ['c'] } },
      { ...config, synchronousMode: 'on' },
    );
    assert.ok(sync.ok, JSON.stringify(sync));
  });
  it('chooses the requested candidate, else the most advanced eligible member; 412 when none qualifies', () => {
    const healthy = clusterOf('a', members);
    const chosen = chooseCandidate(req({ leader: 'a' }), [peer('b', { walPosition: 4_900_000 }), peer('c', { walPosition: 4_950_000 })], healthy, asyncConfig);
    assert.ok(chosen.ok && chosen.candidate === 'c', JSON.stringify(chosen));
    const none = chooseCandidate(req({ action: 'failover', candidate: 'b' }), [peer('b', { nofailover: true })], healthy, asyncConfig);
    assert.ok(!none.ok, JSON.stringify(none));
    assert.equal(none.reply.code, 412);
    assert.equal(none.reply.text.split('\n')[0], 'failover is not possible: no good candidates have been found');
    assert.match(none.reply.text, /b: tagged nofailover/);
  });
  it('reads synchronous_mode in every stored form', () => {
    assert.equal(synchronousModeOf(true), 'on');
    assert.equal(synchronousModeOf('on'), 'on');
    assert.equal(synchronousModeOf('quorum'), 'quorum');
    assert.equal(synchronousModeOf(false), 'off');
    assert.equal(synchronousModeOf(undefined), 'off');
  });
});

describe('switchover outcome', () => {
  const pending = { action: 'switchover' as const, previousLeader: 'a', candidate: 'b' };
  it('waits while the old leader holds the lock or nobody does', () => {
    assert.equal(failoverOutcome(pending, clusterOf('a', [], { failover: { leader: 'a', member: 'b' } })), undefined);
    assert.equal(failoverOutcome(pending, clusterOf(undefined, [])), undefined);
  });
  it('200 texts for the candidate or another member, 503 when the key vanished without a change', () => {
    assert.deepEqual(failoverOutcome(pending, clusterOf('b', [])), { code: 200, text: 'Successfully switched over to "b"' });
    assert.deepEqual(failoverOutcome(pending, clusterOf('c', [])), { code: 200, text: 'Switched over to "c" instead of "b"' });
    const failover = { ...pending, action: 'failover' as const };
    assert.deepEqual(failoverOutcome(failover, clusterOf('b', [])), { code: 200, text: 'Successfully failed over to "b"' });
    assert.deepEqual(failoverOutcome(failover, clusterOf('c', [])), { code: 200, text: 'Failed over to "c" instead of "b"' });
    assert.deepEqual(failoverOutcome(pending, clusterOf('a', [])), { code: 503, text: 'Switchover failed' });
    assert.deepEqual(failoverOutcome(failover, clusterOf('a', [])), { code: 503, text: 'Failover failed' });
    assert.deepEqual(failoverOutcome({ action: 'failover', candidate: 'b' }, clusterOf('b', [])), { code: 200, text: 'Successfully failed over to "b"' });
  });
  it('timeout text and bound', () => {
    assert.equal(outcomeTimeoutSeconds(1), 20);
    assert.equal(outcomeTimeoutSeconds(15), 30);
    assert.deepEqual(statusUnknown('switchover', 20), { code: 503, text: 'Switchover status unknown after 20 seconds; operation may still be in progress' });
  });
});

describe('restart requests and conditions', () => {
  const parse = (body: unknown, paused = false) => parseRestartRequest(body, paused, now);
  const failure = (r: ReturnType<typeof parse>): [number, string] => {
    assert.ok(!r.ok, JSON.stringify(r));
    return [r.reply.code, r.reply.text];
  };
  it('Patroni texts for bad bodies', () => {
    assert.deepEqual(failure(parse({ role: 'bogus' })), [400, 'PostgreSQL role should be either primary, standby_leader, or replica']);
    assert.deepEqual(failure(parse({ postgres_version: 'abc' })), [400, 'Invalid PostgreSQL version: abc']);
    assert.deepEqual(failure(parse({ db_version: '1.x' })), [400, 'Invalid PostgreSQL version: 1.x']);
    assert.deepEqual(failure(parse({ timeout: -1 })), [400, 'Timeout should be a positive number of seconds']);
    assert.deepEqual(failure(parse({ timeout: 1e12 })), [400, 'Timeout should be at most 86400 seconds'], 'a timer beyond 2^31 ms would fire at once');
    assert.deepEqual(failure(parse({ foo: 1 })), [400, 'Unknown filter for the scheduled restart: foo']);
    assert.deepEqual(failure(parse({ schedule: '2026-11-22T11:00:00Z' }, true)), [400, "Can't schedule restart in the paused state"]);
    assert.deepEqual(failure(parse({ schedule: '2026-11-22T09:00:00Z' })), [422, 'Cannot schedule restart in the past']);
    assert.equal(failure(parse([1]))[0], 400);
  });
  it('parses versions, timeouts and booleans', () => {
    assert.equal(parseServerVersion('15'), 150000);
    assert.equal(parseServerVersion('15.4'), 150004);
    assert.equal(parseServerVersion('9.6.3'), 90603);
    assert.equal(parseServerVersion(150018), 150018);
    assert.equal(parseSeconds('2min'), 120);
    assert.equal(parseSeconds('0'), undefined);
    const ok = parse({ restart_pending: 'True', role: 'master', timeout: '30', schedule: '2026-11-22T10:10:00Z' });
    assert.ok(ok.ok, JSON.stringify(ok));
    assert.deepEqual(
      { ...ok.request, schedule: ok.request.schedule?.iso },
      { restartPending: true, role: 'primary', timeout: 30, schedule: '2026-11-22T10:10:00+00:00' },
    );
    assert.deepEqual(parse(undefined), { ok: true, request: {} });
  });
  it('every condition must hold', () => {
    const facts = { role: 'replica' as const, serverVersion: 150018, pendingRestart: false };
    assert.equal(restartConditionsMet({}, facts), true);
    assert.equal(restartConditionsMet({ restartPending: true }, facts), false);
    assert.equal(restartConditionsMet({ restartPending: true }, { ...facts, pendingRestart: true }), true);
    assert.equal(restartConditionsMet({ role: 'primary' }, facts), false);
    assert.equal(restartConditionsMet({ role: 'replica' }, facts), true);
    assert.equal(restartConditionsMet({ dbVersion: 150018 }, facts), false);
    assert.equal(restartConditionsMet({ dbVersion: 160000 }, facts), true);
  });
});

describe('API credentials', () => {
  it('loads basic and token credentials from env or *_FILE, none means open', () => {
    assert.equal(loadApiCredentials({}), undefined);
    assert.deepEqual(loadApiCredentials({ KEELSON_API_USERNAME: 'admin', KEELSON_API_PASSWORD: 'pw' }), {
      username: 'admin',
      password: 'pw',
      token: undefined,
    });
    const files: Record<string, string> = { '/s/token': 'tok\n' };
    assert.deepEqual(
      loadApiCredentials({ KEELSON_API_TOKEN_FILE: '/s/token' }, (p) => files[p]!),
      { username: undefined, password: undefined, token: 'tok' },
    );
    assert.throws(() => loadApiCredentials({ KEELSON_API_USERNAME: 'admin' }), /KEELSON_API_PASSWORD/);
  });
  it('checks basic auth and bearer tokens', () => {
    const creds = { username: 'admin', password: 'pw', token: 'tok' };
    assert.equal(checkAuthorization(undefined, creds), 'missing');
    assert.equal(checkAuthorization(authorizationHeader({ username: 'admin', password: 'pw' }), creds), 'ok');
    assert.equal(checkAuthorization(authorizationHeader({ username: 'admin', password: 'nope' }), creds), 'invalid');
    assert.equal(checkAuthorization(authorizationHeader({ username: 'root', password: 'pw' }), creds), 'invalid');
    assert.equal(checkAuthorization('Bearer tok', creds), 'ok');
    assert.equal(checkAuthorization('Bearer tok2', creds), 'invalid');
    assert.equal(checkAuthorization('Basic !!!', creds), 'invalid');
    assert.equal(checkAuthorization('Bearer tok', { username: 'a', password: 'b' }), 'invalid');
    assert.equal(checkAuthorization(undefined, undefined), 'ok');
  });
});

describe('loop decisions', () => {
  it('pause and the race', () => {
    assert.equal(isPaused({ pause: true }), true);
    assert.equal(isPaused({}), false);
    assert.equal(raceAllowed({ pause: true }, undefined), false);
    assert.equal(raceAllowed({ pause: true }, { member: 'b' }), true);
    assert.equal(raceAllowed({}, undefined), true);
  });
  it('scheduled switchover timing', () => {
    assert.deepEqual(manualFailoverTiming({ leader: 'a', member: 'b' }, now, 10, false), { kind: 'now' });
    assert.deepEqual(manualFailoverTiming({ leader: 'a', member: 'b', scheduled_at: '2026-11-22T10:00:05+00:00' }, now, 10, false), { kind: 'wait', ms: 5000 });
    assert.deepEqual(manualFailoverTiming({ leader: 'a', member: 'b', scheduled_at: '2026-11-22T09:59:55+00:00' }, now, 10, false), { kind: 'now' });
    assert.deepEqual(manualFailoverTiming({ leader: 'a', member: 'b', scheduled_at: '2026-11-22T09:50:00+00:00' }, now, 10, false), { kind: 'stale' });
    assert.equal(manualFailoverTiming({ leader: 'a', member: 'b', scheduled_at: '2026-11-22T09:59:55+00:00' }, now, 10, true).kind, 'wait');
  });
  it('pending restart reasons from pg_settings rows', () => {
    assert.deepEqual(pendingRestartFrom([]), { pending: false, reason: {} });
    assert.deepEqual(pendingRestartFrom([{ name: 'max_connections', old_value: '40', new_value: '41', unit: null }]), {
      pending: true,
      reason: { max_connections: { old_value: '40', new_value: '41' } },
    });
  });
  it('synchronous_standby_names for on, strict and quorum', () => {
    assert.deepEqual(planSyncStandbys('off', false, ['b'], 1), { standbyNames: '', syncStandby: [] });
    assert.deepEqual(planSyncStandbys('on', false, ['b', 'c'], 1), { standbyNames: 'FIRST 1 ("b")', syncStandby: ['b'] });
    assert.deepEqual(planSyncStandbys('on', false, ['b', 'c'], 2), { standbyNames: 'FIRST 2 ("b","c")', syncStandby: ['b', 'c'] });
    assert.deepEqual(planSyncStandbys('on', false, [], 1), { standbyNames: '', syncStandby: [] });
    assert.deepEqual(planSyncStandbys('on', true, [], 1), { standbyNames: `"${strictPlaceholder}"`, syncStandby: [] });
    assert.deepEqual(planSyncStandbys('quorum', false, ['b', 'c'], 1), { standbyNames: 'ANY 1 ("b","c")', syncStandby: ['b', 'c'], quorum: 1 });
    assert.deepEqual(namesIn('ANY 1 ("demo-1","demo-2")'), { method: 'any', count: 1, names: ['demo-1', 'demo-2'] });
    assert.deepEqual(namesIn('FIRST 2 (a, b)'), { method: 'first', count: 2, names: ['a', 'b'] });
    assert.deepEqual(namesIn('a'), { method: 'first', count: 1, names: ['a'] });
    assert.deepEqual(namesIn(''), { method: 'none', count: 0, names: [] });
  });
});
