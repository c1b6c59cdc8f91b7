/**
 * A replica this member has just started, cloned or re-pointed is not ready until it streams, and
 * readiness reads what the last cycle saw. Waiting a whole loop_wait for that cycle made every
 * replica start cost up to loop_wait of readiness; instead the loop looks again every second
 * until the replica streams, bounded by a window so a replica that cannot stream falls back to
 * the normal pace.
 */
import type { ServerStatus } from '../../postgres/status.js';
import { streamingWatched, type StreamingWatch } from '../state.js';

export const streamingLookMs = 1000;
export const streamingWindowMs = 60_000;

/** Called right after PostgreSQL was started or re-pointed as a replica. */
export function watchForStreaming(state: StreamingWatch, nowMs: number): void {
  streamingWatched(state, nowMs + streamingWindowMs);
}

/** The delay to the next look, or undefined when the watch is over (streaming, primary, or timed out). */
export function nextStreamingLook(state: StreamingWatch, status: ServerStatus | undefined, nowMs: number): number | undefined {
  if (state.watchStreamingUntil === undefined) return undefined;
  const streaming = status !== undefined && status.inRecovery && status.replicationState === 'streaming';
  const primary = status !== undefined && !status.inRecovery;
  if (streaming || primary || nowMs >= state.watchStreamingUntil) {
    streamingWatched(state, undefined);
    return undefined;
  }
  return streamingLookMs;
}
