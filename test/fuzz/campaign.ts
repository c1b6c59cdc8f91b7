import { readFileSync } from 'node:fs';
import { Random } from './random.js';
import { sendRaw, type RawAnswer } from './raw-http.js';
import { describeRequest, drawRequest, type FuzzProfile, type FuzzRequest } from './requests.js';

/**
 * Runs a seeded campaign of hostile requests against one running server process and checks, after
 * every request and at the end: the process is alive, no 5xx the spec does not call for, a refused
 * request changed no state, known defect classes get the answer the spec asks for, no secret in the
 * process's logs, and its RSS comes back within a bound.
 */

export interface Secret {
  label: string;
  value: string;
}

export interface FuzzTarget {
  name: string;
  host: string;
  port: number;
  /** The server process (for RSS and liveness). */
  pid: number;
  /** How the process ended, or undefined while it runs. */
  exited(): string | undefined;
  /** Everything the process logged so far. */
  logs(): string;
  secrets: readonly Secret[];
  profile: FuzzProfile;
  /** A 5xx the spec calls for (a health check answering 503, a failed reload...). */
  allows5xx(request: FuzzRequest, status: number): boolean;
  /** The answer refuses the request (so it must have changed nothing). */
  refused(request: FuzzRequest, answer: RawAnswer): boolean;
  /** A further problem with an answer (e.g. an internal-error envelope), or undefined. */
  judge?(request: FuzzRequest, answer: RawAnswer): string | undefined;
  /** A fingerprint of the state a request could change. */
  state(): Promise<string>;
  /** Whether a request can reach the state at all (default: every request); others skip the read. */
  canChangeState?(request: FuzzRequest): boolean;
  /** Puts state back after an accepted write, so the campaign keeps a healthy server. */
  afterAccepted?(request: FuzzRequest): Promise<void>;
  /** Problems found after the campaign (e.g. the node lost its leadership). */
  finalChecks?(): Promise<string[]>;
  stop(): Promise<void>;
}

export interface CampaignOptions {
  seed: number;
  requests: number;
  /** Largest allowed RSS growth over the run, after settling. */
  rssGrowthBytes?: number;
  /** Replays only this request number. */
  onlyIndex?: number;
  /** Prints a progress line every this many requests (soak runs). */
  progressEvery?: number;
}

export interface CampaignResult {
  target: string;
  seed: number;
  requests: number;
  histogram: Record<string, number>;
  /** Problem class → number of requests that showed it. */
  problemCounts: Record<string, number>;
  /** The first few failures, each naming the request number and the request. */
  failures: string[];
  rssBeforeBytes: number;
  rssAfterBytes: number;
  durationMs: number;
  /** Time spent waiting for answers, and for state fingerprints. */
  answerMs: number;
  stateMs: number;
}

const readOnly = new Set(['GET', 'HEAD', 'OPTIONS']);
const failureLimit = 40;

export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function runCampaign(target: FuzzTarget, options: CampaignOptions): Promise<CampaignResult> {
  const histogram: Record<string, number> = {};
  const problemCounts: Record<string, number> = {};
  const failures: string[] = [];
  const started = performance.now();
  const rssBeforeBytes = rssBytes(target.pid);
  const note = (index: number, request: FuzzRequest | undefined, problem: string, detail = ''): void => {
    problemCounts[problem] = (problemCounts[problem] ?? 0) + 1;
    if (failures.length < failureLimit && problemCounts[problem] <= 5)
      failures.push(`#${index} ${problem}${detail ? ` (${detail})` : ''}${request ? `\n    ${describeRequest(request)}` : ''}`);
  };
  let answerMs = 0;
  let stateMs = 0;
  const state = async (): Promise<string> => {
    const t = performance.now();
    const value = await target.state();
    stateMs += performance.now() - t;
    return value;
  };
  let baseline = await state();
  const first = options.onlyIndex ?? 0;
  const last = options.onlyIndex ?? options.requests - 1;
  let sent = 0;
  for (let index = first; index <= last; index += 1) {
    const request = drawRequest(Random.forRequest(options.seed, index), target.profile);
    const sentAt = performance.now();
    const answer = await sendRaw(target.host, target.port, request);
    answerMs += performance.now() - sentAt;
    sent += 1;
    const key = String(answer.status);
    histogram[key] = (histogram[key] ?? 0) + 1;
    const exit = target.exited();
    if (exit) {
      note(index, request, 'process exited', exit);
      break;
    }
    if (answer.status === 'timeout') note(index, request, 'no answer within 10 s');
    if (typeof answer.status === 'number' && answer.status >= 500 && !target.allows5xx(request, answer.status))
      note(index, request, `answered ${answer.status}`, answer.body.slice(0, 120));
    const judged = target.judge?.(request, answer);
    if (judged) note(index, request, judged, answer.body.slice(0, 120));
    if (request.kind.startsWith('case:')) {
      const name = request.kind.slice(5);
      const verdict = target.profile.knownCases.find((c) => c.name === name)?.judge(answer);
      if (verdict) note(index, request, `${name}: ${verdict}`, `answered ${answer.status}: ${answer.body.slice(0, 100)}`);
    }
    const mutating = !readOnly.has(request.method) && (target.canChangeState?.(request) ?? true);
    // A Content-Length shorter than the body (or none) sends a shorter, possibly valid request, and the rest
    // of the bytes as a second, garbled one: the answer read may be the second's refusal while the
    // first was accepted. Such a request cannot be judged by the state it leaves.
    const truncated =
      request.body.length > 0 &&
      (request.contentLength === 'omit' || (typeof request.contentLength === 'number' && request.contentLength < request.body.length));
    if (target.refused(request, answer) && !truncated) {
      if (mutating || request.kind.startsWith('case:')) {
        const now = await state();
        if (now !== baseline) {
          note(index, request, 'refused request changed state', `answered ${answer.status}`);
          baseline = now;
        }
      }
    } else if (mutating) {
      await target.afterAccepted?.(request);
      baseline = await state();
    }
    if (options.progressEvery && sent % options.progressEvery === 0) console.log(`${target.name}: ${sent} requests, ${JSON.stringify(histogram)}`);
  }
  const exit = target.exited();
  if (exit && !problemCounts['process exited']) note(last, undefined, 'process exited', exit);
  if (!exit) for (const problem of (await target.finalChecks?.()) ?? []) note(last, undefined, problem);
  const logs = target.logs();
  for (const secret of target.secrets)
    if (secret.value && logs.includes(secret.value))
      note(
        last,
        undefined,
        `secret in logs: ${secret.label}`,
        logs
          .split('\n')
          .find((l) => l.includes(secret.value))
          ?.replaceAll(secret.value, '<secret>')
          .slice(0, 200),
      );
  const rssAfterBytes = await settledRss(target.pid, rssBeforeBytes + (options.rssGrowthBytes ?? 128 * 1024 * 1024));
  if (!exit && options.rssGrowthBytes !== undefined && rssAfterBytes > rssBeforeBytes + options.rssGrowthBytes) {
    note(last, undefined, 'RSS did not come back', `${mib(rssBeforeBytes)} → ${mib(rssAfterBytes)} MiB, bound +${mib(options.rssGrowthBytes)} MiB`);
  }
  return {
    target: target.name,
    seed: options.seed,
    requests: sent,
    histogram,
    problemCounts,
    failures,
    rssBeforeBytes,
    rssAfterBytes,
    durationMs: performance.now() - started,
    answerMs,
    stateMs,
  };
}

/** RSS after the run: waits up to 10 s for it to fall under bound (the heap shrinks after idle GCs). */
async function settledRss(pid: number, bound: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  let rss = rssBytes(pid);
  while (rss > bound && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    rss = rssBytes(pid);
  }
  return rss;
}

export const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/** The campaign's figures and failures as text; replay instructions name the seed. */
export function formatResult(result: CampaignResult, testFile: string): string {
  const lines = [
    `fuzz ${result.target}: seed ${result.seed}, ${result.requests} requests in ${(result.durationMs / 1000).toFixed(1)} s (${(result.answerMs / 1000).toFixed(1)} s waiting for answers, ${(result.stateMs / 1000).toFixed(1)} s reading state)`,
    `  answers: ${Object.entries(result.histogram)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
    `  RSS: ${mib(result.rssBeforeBytes)} MiB before, ${mib(result.rssAfterBytes)} MiB after`,
  ];
  if (result.failures.length) {
    lines.push(
      `  problems: ${Object.entries(result.problemCounts)
        .map(([k, v]) => `${k} ×${v}`)
        .join('; ')}`,
    );
    lines.push(...result.failures.map((f) => `  ${f}`));
    lines.push(`  replay: FUZZ_SEED=${result.seed} npm test -- ${testFile}   (add FUZZ_INDEX=<n> for one request)`);
  }
  return lines.join('\n');
}

/** Campaign options from the environment: FUZZ_SEED, FUZZ_REQUESTS, FUZZ_INDEX. */
export function optionsFromEnv(seed: number, defaultRequests: number): Pick<CampaignOptions, 'seed' | 'requests' | 'onlyIndex'> {
  const index = process.env.FUZZ_INDEX;
  return { seed, requests: Number(process.env.FUZZ_REQUESTS ?? defaultRequests), onlyIndex: index !== undefined && index !== '' ? Number(index) : undefined };
}
