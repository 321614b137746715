import { parse } from "hono/utils/cookie";

/**
 * The device cookie's name and shape (src/auth/devices/device-cookie.ts sets it): plumbing, because the request's
 * `Visitor` reads it (the lockout asks whether the sign-in comes from one of the account's known devices).
 */
export const DEVICE_COOKIE = "edge_auth_device";

/** 16 random bytes (128 bits), base64url: what we set, and the only shape we read back. */
const SHAPE = /^[A-Za-z0-9_-]{22}$/;

/** The device cookie in a `Cookie` header, or null when it has none or one we did not make. */
export function deviceCookieIn(cookieHeader: string | null | undefined): string | null {
  if (!cookieHeader) return null;
  const value = parse(cookieHeader, DEVICE_COOKIE)[DEVICE_COOKIE];
  return value && SHAPE.test(value) ? value : null;
}
