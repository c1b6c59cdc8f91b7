import { z } from 'zod';

export const phoneSchema = z.string().trim().regex(/^\+?[0-9]{5,20}$/, 'must be a phone number (5-20 digits)');

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
export const passwordBody = z.object({ oldPassword: z.string().min(1).max(128), newPassword: z.string().min(6).max(128) });
