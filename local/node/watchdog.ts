/**
 * Container processes run in their own process groups, so they would outlive an agent that dies
 * abruptly (uncaught error, SIGKILL, a test runner timing out) and keep their addresses and
 * ports. Two guards stop that:
 * - an `exit` hook that kills every process carrying this node's marker (synchronous, so it runs
 *   even on process.exit() and uncaught exceptions);
 * - a tiny detached shell watchdog that polls the agent's pid once a second and, when the agent is
 *   gone without having stopped it, kills every process whose environment holds the marker, and
 *   their children.
 */
import { spawn } from 'node:child_process';
import { killContainerProcesses, markerVariable } from './process.js';

const script = `
while kill -0 "$KEELSON_WATCH_PID" 2>/dev/null; do sleep 1; done
pids=""
for env in /proc/[0-9]*/environ; do
  if grep -qzx "${markerVariable}=$KEELSON_WATCH_PREFIX.*" "$env" 2>/dev/null; then
    pid=\${env#/proc/}; pid=\${pid%/environ}; kill -STOP "$pid" 2>/dev/null; pids="$pids $pid"
  fi
done
# Children that dropped the marker (PostgreSQL backends) go with their stopped parents.
for pid in $pids; do pkill -9 -P "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
`;

export interface OrphanGuard {
  stop(): void;
}

export function guardAgainstOrphans(markerPrefix: string): OrphanGuard {
  if (!/^[0-9a-f]+\/$/.test(markerPrefix)) throw new Error(`marker prefix "${markerPrefix}" must be hex followed by /`);
  const onExit = (): void => {
    killContainerProcesses(markerPrefix, 'SIGKILL', true);
  };
  process.on('exit', onExit);
  const watchdog = spawn('/bin/sh', ['-c', script], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KEELSON_WATCH_PID: String(process.pid), KEELSON_WATCH_PREFIX: markerPrefix },
  });
  watchdog.on('error', () => undefined);
  watchdog.unref();
  return {
    stop() {
      process.off('exit', onExit);
      try {
        if (watchdog.pid !== undefined) process.kill(-watchdog.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
