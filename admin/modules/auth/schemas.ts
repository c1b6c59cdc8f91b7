import { z } from 'zod';
import { userProfileShape } from '../system-manage/users.js';

export const phoneSchema = z
  .string()
  .trim()
  .regex(/^\+?[0-9]{5,20}$/, 'must be a phone number (5-20 digits)');

export const loginBody = z.object({
  // Missing or odd credentials are a failed login (2401), not a validation error.
  userName: z.unknown().optional(),
  password: z.unknown().optional(),
});

export const captchaBody = z.object({ phone: phoneSchema });
export const codeLoginBody = z.object({ phone: phoneSchema, code: z.string().trim().min(1).max(10) });
export const registerBody = z.object({
  phone: phoneSchema,
  code: z.string().trim().min(1).max(10),
  password: z.string().min(6).max(128),
  userName: z.string().trim().min(1).max(20).optional(),
});
export const refreshBody = z.object({ refreshToken: z.string().max(4096).optional(), token: z.unknown().optional() });
export const newPasswordSchema = z.string().min(6).max(128);
export const passwordBody = z.object({ oldPassword: z.string().min(1).max(128), newPassword: newPasswordSchema });
/** Signed in: the old password proves it is the account holder and not just a borrowed token. */
export const resetByOldPasswordBody = passwordBody.strict();
/** Signed out (the login page's "forgot password"): a captcha sent to the account's phone. */
export const resetByCaptchaBody = z.strictObject({ phone: phoneSchema, code: z.string().trim().min(1).max(10), password: newPasswordSchema });
/** Only the caller's own contact details: roles, status and user name stay with administrators. */
export const profileBody = z.strictObject(userProfileShape);
