import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { lastErrorLine, PodDiagnostics } from '../../../local/cluster/pod-diagnostics.js';

function pod(name: string, uid: string, options: { ready?: boolean; restarts?: number; waiting?: string } = {}): V1Pod {
  return {
    metadata: { name, uid, namespace: 'default' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: options.ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'postgres',
          image: 'keelson',
          imageID: '',
          ready: Boolean(options.ready),
          restartCount: options.restarts ?? 0,
          state: options.waiting ? { waiting: { reason: options.waiting } } : { running: {} },
        },
      ],
    },
  };
}

describe('local up: why pods are not Ready', () => {
  it("takes the last error line of a log: PostgreSQL, a shell, or a pino error with the server's reasons", () => {
    assert.equal(
      lastErrorLine(
        'LOG:  starting\n2026-11-29 GMT [1] FATAL:  could not restore file "00000002.history" from archive: command not found\nLOG:  shutting down\n',
      ),
      '2026-11-29 GMT [1] FATAL:  could not restore file "00000002.history" from archive: command not found',
    );
    const pino = JSON.stringify({
      level: 'error',
      msg: 'PostgreSQL did not start',
      output: 'pg_ctl: could not start server\nExamine the log output.',
      serverLog: 'sh: 1: pgbackrest: not found\nFATAL:  could not restore file',
    });
    assert.equal(
      lastErrorLine(`${pino}\n${JSON.stringify({ level: 30, msg: 'loop' })}\n`),
      'PostgreSQL did not start: sh: 1: pgbackrest: not found | FATAL:  could not restore file',
    );
    assert.equal(lastErrorLine(`${JSON.stringify({ level: 50, msg: 'boom', err: { message: 'spawn pgbouncer ENOENT' } })}\n`), 'boom: spawn pgbouncer ENOENT');
    assert.equal(lastErrorLine('all good\n{"level":30,"msg":"ok"}\n'), undefined);
  });

  it('tells a pod unready past the grace period once, with its container and log line', () => {
    const diagnostics = new PodDiagnostics(() => 'FATAL:  the reason\n', 30_000);
    const replica = pod('demo-1', 'u1');
    assert.deepEqual(diagnostics.observe([replica], 0), []);
    assert.deepEqual(diagnostics.observe([replica], 29_000), []);
    assert.deepEqual(diagnostics.observe([replica], 31_000), [
      '  pod demo-1, container postgres: not ready for 31 s; running, not ready; last error: FATAL:  the reason',
    ]);
    assert.deepEqual(diagnostics.observe([replica], 40_000), [], 'told once per episode');
    assert.deepEqual(diagnostics.observe([pod('demo-1', 'u1', { ready: true })], 41_000), []);
    assert.deepEqual(diagnostics.observe([replica], 42_000), [], 'a new episode starts its own grace period');
  });

  it('tells a crash loop at once and again on each restart, and sums up every unready pod', () => {
    const diagnostics = new PodDiagnostics((p, container) =>
      p.metadata?.name === 'demo-pooler' && container === 'postgres' ? 'sh: 1: pgbouncer: not found\n' : undefined,
    );
    assert.deepEqual(diagnostics.observe([pod('demo-pooler', 'p1', { restarts: 1, waiting: 'CrashLoopBackOff' }), pod('demo-0', 'u0', { ready: true })], 0), [
      '  pod demo-pooler, container postgres: restarting; waiting (CrashLoopBackOff), 1 restart; last error: sh: 1: pgbouncer: not found',
    ]);
    assert.deepEqual(diagnostics.observe([pod('demo-pooler', 'p1', { restarts: 1, waiting: 'CrashLoopBackOff' })], 1_000), []);
    assert.equal(diagnostics.observe([pod('demo-pooler', 'p1', { restarts: 2 })], 2_000).length, 1);
    assert.deepEqual(diagnostics.summary([pod('demo-pooler', 'p1', { restarts: 2 }), pod('demo-0', 'u0', { ready: true }), pod('demo-2', 'u2')], 5_000), [
      '  pod demo-pooler, container postgres: not ready for 5 s; running, not ready, 2 restarts; last error: sh: 1: pgbouncer: not found',
      '  pod demo-2, container postgres: not ready for 0 s; running, not ready; last error: (none in its log)',
    ]);
  });
});
