import type { Response } from 'express';
import { Code, defaultMessage } from './codes.js';

/** The one response shape: `{code, msg, data}` with a string code. */
export interface Envelope<T = unknown> {
  code: string;
  msg: string;
  data: T;
}

export interface PageData<T> {
  records: T[];
  total: number;
  current: number;
  size: number;
}

/** A business failure: caught by the error middleware and sent as HTTP 200 with its code. */
export class BizError extends Error {
  constructor(
    readonly code: string,
    message?: string,
    readonly httpStatus = 200,
  ) {
    super(message ?? defaultMessage[code] ?? 'request failed');
    this.name = 'BizError';
  }
}

export const fail = (code: string, msg?: string): BizError => new BizError(code, msg);

export function success<T>(data: T, msg = 'OK'): Envelope<T> {
  return { code: Code.OK, msg, data };
}

export function successExtra<T>(page: PageData<T>, msg = 'OK'): Envelope<PageData<T>> {
  return { code: Code.OK, msg, data: page };
}

export function failure(code: string, msg?: string): Envelope<null> {
  return { code, msg: msg ?? defaultMessage[code] ?? 'request failed', data: null };
}

/** Custom(code, status, msg, data): any envelope with any HTTP status. */
export function sendCustom(res: Response, code: string, statusCode: number, msg: string, data: unknown = null): void {
  res.status(statusCode).json({ code, msg, data });
}
