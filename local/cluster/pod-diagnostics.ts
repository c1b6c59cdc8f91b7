import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/**
 * Why pods are not Ready, told while `keelson local up` waits: a container that restarts or a pod
 * unready for longer than a grace period is reported once per episode with the last error line of
 * its log, and on the deadline every pod that is not Ready is summed up. Reading the logs is the
 * caller's (the node agent keeps them as files).
 */
export const unreadyGraceMs = 30_000;

/** Reads a container's log; undefined when there is none. */
export type LogReader = (pod: V1Pod, container: string) => string | undefined;

const errorPattern = /\b(FATAL|PANIC|ERROR|error|fatal|failed|not found|No such file|denied|refused|cannot|could not)\b/;

interface JsonLogLine {
  level?: unknown;
  msg?: unknown;
  err?: unknown;
  serverLog?: unknown;
  output?: unknown;
}

/** pino writes its level as a number (50 = error) or, with a formatter, as its label. */
function isErrorLevel(level: unknown): boolean {
  return typeof level === 'number' ? level >= 50 : level === 'error' || level === 'fatal';
}

const lastLines = (text: unknown, count: number) => (typeof text === 'string' ? text.trim().split('\n').slice(-count).join(' | ') : '');

/** A pino line's readable part (message, then the error, the server's log or the tool's output), or undefined for a line that is not an error. */
function jsonErrorText(line: string): string | undefined {
  let parsed: JsonLogLine;
  try {
    parsed = JSON.parse(line) as JsonLogLine;
  } catch {
    return undefined;
  }
  if (!isErrorLevel(parsed.level)) return undefined;
  const err = parsed.err;
  const detail =
    typeof err === 'string'
      ? err
      : typeof err === 'object' && err !== null && 'message' in err
        ? String((err as { message: unknown }).message)
        : lastLines(parsed.serverLog, 2) || lastLines(parsed.output, 1);
  return [String(parsed.msg ?? ''), detail].filter(Boolean).join(': ');
}

/** The last line of a log that reads as an error (PostgreSQL's FATAL, a shell's "not found", a pino error). */
export function lastErrorLine(log: string): string | undefined {
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]!.trim();
    if (!line) continue;
    if (line.startsWith('{')) {
      const text = jsonErrorText(line);
      if (text) return text.slice(0, 400);
      continue;
    }
    if (errorPattern.test(line)) return line.slice(0, 400);
  }
  return undefined;
}

/** The last `bytes` of a file, or undefined when it cannot be read. */
export function readTail(path: string, bytes = 64 * 1024): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function podReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function containerState(status: V1ContainerStatus): string {
  const waiting = status.state?.waiting;
  if (waiting) return `waiting (${waiting.reason ?? 'unknown'})`;
  const terminated = status.state?.terminated;
  if (terminated) return `terminated (exit ${terminated.exitCode}${terminated.reason ? `, ${terminated.reason}` : ''})`;
  return status.ready ? 'running, ready' : 'running, not ready';
}

/** Which container of a pod to blame: a restarting or waiting one, else the first not ready. */
function culprit(pod: V1Pod): V1ContainerStatus | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  return (
    statuses.find((s) => s.state?.waiting?.reason === 'CrashLoopBackOff') ??
    [...statuses].sort((a, b) => b.restartCount - a.restartCount).find((s) => s.restartCount > 0) ??
    statuses.find((s) => !s.ready)
  );
}

function describe(pod: V1Pod, status: V1ContainerStatus | undefined, readLog: LogReader, why: string): string {
  const name = pod.metadata?.name ?? '?';
  if (!status) return `  pod ${name}: ${why}; phase ${pod.status?.phase ?? 'Pending'}, no container started yet`;
  const log = readLog(pod, status.name);
  const error = log === undefined ? undefined : lastErrorLine(log);
  const restarts = status.restartCount > 0 ? `, ${status.restartCount} restart${status.restartCount === 1 ? '' : 's'}` : '';
  return `  pod ${name}, container ${status.name}: ${why}; ${containerState(status)}${restarts}; last error: ${error ?? '(none in its log)'}`;
}

/** Remembers what was told, so each problem is told once per episode. */
export class PodDiagnostics {
  private readonly unreadySince = new Map<string, number>();
  private readonly told = new Map<string, string>();

  constructor(
    private readonly readLog: LogReader,
    private readonly graceMs = unreadyGraceMs,
  ) {}

  /** Lines to print for this look at the pods (none when nothing new went wrong). */
  observe(pods: readonly V1Pod[], now: number): string[] {
    const lines: string[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? pod.metadata?.name ?? '?';
      seen.add(uid);
      if (podReady(pod) || pod.status?.phase === 'Succeeded') {
        this.unreadySince.delete(uid);
        this.told.delete(uid);
        continue;
      }
      const since = this.unreadySince.get(uid) ?? now;
      this.unreadySince.set(uid, since);
      const status = culprit(pod);
      const restarting = (status?.restartCount ?? 0) > 0;
      if (!restarting && now - since < this.graceMs) continue;
      // Told again only when the container restarts once more (a new episode of the crash loop).
      const key = `${status?.name ?? ''}/${status?.restartCount ?? 0}`;
      if (this.told.get(uid) === key) continue;
      this.told.set(uid, key);
      const why = restarting ? 'restarting' : `not ready for ${Math.round((now - since) / 1000)} s`;
      lines.push(describe(pod, status, this.readLog, why));
    }
    for (const uid of [...this.unreadySince.keys()]) if (!seen.has(uid)) this.unreadySince.delete(uid);
    return lines;
  }

  /** Every pod that is not Ready, for the deadline's summary. */
  summary(pods: readonly V1Pod[], now: number): string[] {
    return pods
      .filter((pod) => !podReady(pod) && pod.status?.phase !== 'Succeeded')
      .map((pod) => {
        const since = this.unreadySince.get(pod.metadata?.uid ?? pod.metadata?.name ?? '?') ?? now;
        return describe(pod, culprit(pod), this.readLog, `not ready for ${Math.round((now - since) / 1000)} s`);
      });
  }
}
