/** How ctl's calls fail: distinct classes so that run.ts maps them to distinct exit codes. */

/** Failure to reach any member: exit code 3, distinct from a refused operation (1). */
export class UnreachableError extends Error {}

/** Refusal by the API (non-2xx), carrying the member's text for the user. */
export class OperationError extends Error {
  constructor(
    readonly status: number,
    text: string,
  ) {
    super(text);
  }
}
