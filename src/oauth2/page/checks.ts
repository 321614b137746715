import type { TurnstileEndpoint } from "../../config";
import { AppError } from "../../errors";
import { verifyTurnstile } from "../../http/turnstile";
import { countRequest, type RateLimitBucket } from "../../rate-limits/buckets";
import { addressKey } from "../../rate-limits/client-address";
import type { Ctx } from "./respond";
import type { PageText } from "./text";

/** The checks the page's forms share with the API they stand for: rate limits and Turnstile. */

/** The page's forms count against the same buckets as the API they stand for (contract §11). */
export async function rateLimited(c: Ctx, bucket: RateLimitBucket, email: string): Promise<number | null> {
  const deps = c.var.deps;
  const refusal = await countRequest(
    c.env,
    deps.config.rateLimits,
    bucket,
    {
      address: addressKey(c.req.header("cf-connecting-ip") ?? "unknown"),
      account: `id:${email.toLowerCase()}`,
    },
    deps.now(),
  );
  return refusal?.retryAfterSeconds ?? null;
}

/**
 * Turnstile on a page form, when the deployment guards its endpoint: the widget puts its token in the form as
 * `cf-turnstile-response`. Without a site key the page has no widget to show, and the form fails closed like the
 * API (the operator sees why in the log).
 */
export async function passTurnstile(c: Ctx, endpoint: TurnstileEndpoint, params: Map<string, string>) {
  const settings = c.var.config.turnstile;
  if (!settings?.endpoints.has(endpoint)) return;
  if (!settings.siteKey)
    console.warn(`turnstile: the OAuth2 page guards ${endpoint} but AUTH_TURNSTILE_SITE_KEY is unset`);
  const token = (params.get("cf-turnstile-response") ?? "").trim();
  if (!token) throw new AppError("turnstile-required");
  if (token.length > 2048) throw new AppError("turnstile-failed");
  await verifyTurnstile(settings, c.var.deps.outbound, {
    token,
    remoteIp: c.req.header("cf-connecting-ip") ?? null,
    endpoint,
  });
}

/** A Turnstile refusal in the page's words; undefined for any other error. */
export function turnstileMessage(t: PageText, error: AppError): string | undefined {
  if (error.code === "turnstile-unavailable") return t.errors.turnstileUnavailable;
  if (error.code === "turnstile-required" || error.code === "turnstile-failed") return t.errors.turnstile;
  return undefined;
}
