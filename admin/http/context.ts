import { AsyncLocalStorage } from 'node:async_hooks';

/** The authenticated user as the request context holds it (no password hash). */
export interface ContextUser {
  id: number;
  userName: string;
  nickName: string | null;
  userGender: string;
  userEmail: string | null;
  userPhone: string | null;
  lastLogin: Date | null;
  statusType: string;
  tokenVersion: number;
  mustChangePassword: boolean;
}

export interface BackgroundTasks {
  add(task: () => Promise<void> | void): void;
}

/** Per-request values, named after the spec's CTX_* variables. */
export interface RequestContextValues {
  CTX_USER_ID: number | undefined;
  CTX_USER: ContextUser | undefined;
  CTX_ROLE_CODES: string[];
  CTX_BUTTON_CODES: string[];
  CTX_IMPERSONATOR_ID: number | undefined;
  CTX_X_REQUEST_ID: string;
  CTX_BG_TASKS: BackgroundTasks | undefined;
}

const storage = new AsyncLocalStorage<RequestContextValues>();

export function newContext(requestId: string): RequestContextValues {
  return {
    CTX_USER_ID: undefined,
    CTX_USER: undefined,
    CTX_ROLE_CODES: [],
    CTX_BUTTON_CODES: [],
    CTX_IMPERSONATOR_ID: undefined,
    CTX_X_REQUEST_ID: requestId,
    CTX_BG_TASKS: undefined,
  };
}

export function runWithContext<T>(values: RequestContextValues, fn: () => T): T {
  return storage.run(values, fn);
}

/** The current request's context; throws outside a request so misuse is loud. */
export function currentContext(): RequestContextValues {
  const ctx = storage.getStore();
  if (!ctx) throw new LookupError('no request context');
  return ctx;
}

/** Raised when a context value is asked for but not set (the spec's LookupError). */
export class LookupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LookupError';
  }
}

export const SUPER_ROLE = 'R_SUPER';

export function getCurrentUserId(): number {
  const id = storage.getStore()?.CTX_USER_ID;
  if (id === undefined) throw new LookupError('not authenticated');
  return id;
}

export function getCurrentUser(): ContextUser | undefined {
  return storage.getStore()?.CTX_USER;
}

export function getImpersonatorId(): number | undefined {
  return storage.getStore()?.CTX_IMPERSONATOR_ID;
}

export function isSuperAdmin(): boolean {
  return storage.getStore()?.CTX_ROLE_CODES.includes(SUPER_ROLE) ?? false;
}

export function hasRoleCode(code: string): boolean {
  return storage.getStore()?.CTX_ROLE_CODES.includes(code) ?? false;
}

export function hasButtonCode(code: string): boolean {
  return storage.getStore()?.CTX_BUTTON_CODES.includes(code) ?? false;
}

export function getRequestId(): string | undefined {
  return storage.getStore()?.CTX_X_REQUEST_ID;
}
